/** Bounded path labels: the API a call belongs to, never its ids. */
export function pathFamily(path: string): string {
  if (path.startsWith('/v1/chat/') || path === '/v1/completions') return 'chat'
  if (path.startsWith('/v1/messages/batches') || path.startsWith('/v1/batches')) return 'batches'
  if (path.startsWith('/v1/messages')) return 'messages'
  if (path.startsWith('/v1/responses')) return 'responses'
  if (path.startsWith('/v1/embeddings')) return 'embeddings'
  if (path.startsWith('/v1/audio/')) return 'audio'
  if (path.startsWith('/v1/images/')) return 'images'
  if (path.startsWith('/v1/moderations')) return 'moderations'
  if (path.startsWith('/v1/files')) return 'files'
  return 'other'
}
