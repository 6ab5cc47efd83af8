/**
 * The parts of Google's Gemini `generateContent` wire format (the Gemini API and Vertex AI share it)
 * that gw translates. Field names are the JSON (camelCase) ones Google sends and the SDKs send. As
 * with the other formats, bodies arrive unchecked and are read defensively; these types say what a
 * well-formed body holds, and the request keeps an `unknown` index signature because callers send
 * fields gw does not translate, which must be seen to be named as dropped.
 */

export interface GeminiBlob {
  mimeType: string
  /** Base64, standard alphabet. */
  data: string
}

export interface GeminiFileData {
  mimeType?: string
  fileUri: string
}

export interface GeminiFunctionCall {
  name: string
  args?: Record<string, unknown>
  /** Gemini 3 (and the Live API) number their calls; Gemini 2.x sends none and pairs results by name. */
  id?: string
}

export interface GeminiFunctionResponse {
  name: string
  /** An object: Google reads `output` as the result and `error` as a failure, else the whole object as output. */
  response: Record<string, unknown>
  id?: string
  /** Multimodal tool output (Gemini 3). */
  parts?: Array<{ inlineData: GeminiBlob }>
}

/** One piece of a turn: exactly one of the data fields, plus optional metadata. */
export interface GeminiPart {
  text?: string
  /** Marks `text` as a thought summary. */
  thought?: boolean
  /** Gemini's opaque token for the part (base64), which it wants back on the same part in the history. */
  thoughtSignature?: string
  inlineData?: GeminiBlob
  fileData?: GeminiFileData
  functionCall?: GeminiFunctionCall
  functionResponse?: GeminiFunctionResponse
}

export interface GeminiContent {
  /** Absent means `user` on the Gemini API; Vertex insists on it, so gw always sends it. */
  role?: 'user' | 'model'
  parts: GeminiPart[]
}

export interface GeminiFunctionDeclaration {
  name: string
  description?: string
  /** The OpenAPI-subset schema (`type: "OBJECT"`, ...): what older callers send. */
  parameters?: Record<string, unknown>
  /** Plain JSON Schema, which the Gemini API takes as written. */
  parametersJsonSchema?: Record<string, unknown>
}

export interface GeminiTool {
  functionDeclarations?: GeminiFunctionDeclaration[]
  /** Google's own tools (googleSearch, codeExecution, urlContext, ...), which run at Google only. */
  [tool: string]: unknown
}

export type GeminiFunctionCallingMode = 'AUTO' | 'ANY' | 'NONE' | 'VALIDATED' | 'MODE_UNSPECIFIED'

export interface GeminiToolConfig {
  functionCallingConfig?: { mode?: GeminiFunctionCallingMode; allowedFunctionNames?: string[] }
}

export interface GeminiThinkingConfig {
  includeThoughts?: boolean
  /** Tokens; 0 turns thinking off, -1 lets the model decide. */
  thinkingBudget?: number
  thinkingLevel?: string
}

export interface GeminiGenerationConfig {
  /** Bounds thinking and the visible answer together. */
  maxOutputTokens?: number
  temperature?: number
  topP?: number
  topK?: number
  stopSequences?: string[]
  seed?: number
  presencePenalty?: number
  frequencyPenalty?: number
  candidateCount?: number
  responseMimeType?: string
  /** The OpenAPI-subset schema, as `parameters` is. */
  responseSchema?: Record<string, unknown>
  responseJsonSchema?: Record<string, unknown>
  thinkingConfig?: GeminiThinkingConfig
  [field: string]: unknown
}

/** The body of `models/{model}:generateContent`: the model is in the URL, not here. */
export interface GeminiGenerateContentRequest {
  contents: GeminiContent[]
  /** Its role, if any, means nothing (the JS SDK sends `user`). */
  systemInstruction?: GeminiContent
  tools?: GeminiTool[]
  toolConfig?: GeminiToolConfig
  generationConfig?: GeminiGenerationConfig
  /** Everything else a caller may send (safetySettings, cachedContent, labels, ...). */
  [field: string]: unknown
}

/** Why a candidate ended. The enum keeps growing; an unknown value is read as a plain end. */
export type GeminiFinishReason =
  | 'FINISH_REASON_UNSPECIFIED'
  | 'STOP'
  | 'MAX_TOKENS'
  | 'SAFETY'
  | 'RECITATION'
  | 'LANGUAGE'
  | 'OTHER'
  | 'BLOCKLIST'
  | 'PROHIBITED_CONTENT'
  | 'SPII'
  | 'MALFORMED_FUNCTION_CALL'
  | 'IMAGE_SAFETY'
  | 'IMAGE_PROHIBITED_CONTENT'
  | 'IMAGE_RECITATION'
  | 'IMAGE_OTHER'
  | 'NO_IMAGE'
  | 'UNEXPECTED_TOOL_CALL'
  | 'TOO_MANY_TOOL_CALLS'
  | 'MISSING_THOUGHT_SIGNATURE'

export interface GeminiCandidate {
  /** May lack `parts` (thinking used up the limit, or the answer was filtered). */
  content?: GeminiContent
  /** Only on a stream's last chunk. */
  finishReason?: GeminiFinishReason
  /** Vertex often leaves it out: absent means 0. */
  index?: number
}

/**
 * `promptTokenCount` counts every input token, the cached ones among them; `candidatesTokenCount`
 * leaves out the thinking, counted in `thoughtsTokenCount`. Zero counts are left out.
 */
export interface GeminiUsageMetadata {
  promptTokenCount?: number
  candidatesTokenCount?: number
  thoughtsTokenCount?: number
  cachedContentTokenCount?: number
  /** Results of Google's own tools fed back to the model, billed as input. */
  toolUsePromptTokenCount?: number
  totalTokenCount?: number
}

/** A whole answer, and also each chunk of a stream (which carries only the new parts). */
export interface GeminiGenerateContentResponse {
  /** Absent when the prompt itself was blocked. */
  candidates?: GeminiCandidate[]
  promptFeedback?: { blockReason?: string }
  /** Cumulative on the Gemini API's stream chunks; on Vertex complete only on the last. */
  usageMetadata?: GeminiUsageMetadata
  modelVersion?: string
  responseId?: string
}
