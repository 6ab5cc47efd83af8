import { describe, expect, test } from 'bun:test'
import { encodeSse, SseParser } from '../src/util/sse'

const bytes = (text: string) => new TextEncoder().encode(text)

describe('SSE parsing and encoding', () => {
  test('events split across chunks at any byte come out whole', () => {
    const text = 'event: message_start\ndata: {"a":1}\n\ndata: [DONE]\n\n'
    for (let cut = 1; cut < text.length; cut++) {
      const parser = new SseParser()
      const events = [...parser.push(bytes(text.slice(0, cut))), ...parser.push(bytes(text.slice(cut))), ...parser.end()]
      expect(events).toEqual([{ event: 'message_start', data: '{"a":1}' }, { data: '[DONE]' }])
    }
  })

  test('CRLF line ends, comments and multi-line data', () => {
    const parser = new SseParser()
    const events = [...parser.push(bytes(': keep-alive\r\ndata: one\r\ndata: two\r\n\r\n')), ...parser.end()]
    expect(events).toEqual([{ data: 'one\ntwo' }])
  })

  test('a multi-byte character split between chunks is kept', () => {
    const all = bytes('data: héllo ✓\n\n')
    const parser = new SseParser()
    const events = [...parser.push(all.slice(0, 8)), ...parser.push(all.slice(8)), ...parser.end()]
    expect(events).toEqual([{ data: 'héllo ✓' }])
  })

  test('a last event without its blank line is still delivered at the end', () => {
    const parser = new SseParser()
    expect(parser.push(bytes('data: tail'))).toEqual([])
    expect(parser.end()).toEqual([{ data: 'tail' }])
  })

  test('encoding round-trips', () => {
    const event = { event: 'gw', data: '{"requestId":"x"}\nsecond line' }
    const parser = new SseParser()
    expect([...parser.push(encodeSse(event)), ...parser.end()]).toEqual([event])
  })
})
