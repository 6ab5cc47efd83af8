/** Printable ASCII and tab: what every HTTP stack accepts in a header value, unchanged. */
const PLAIN_HEADER_VALUE = /^[\t\x20-\x7e]*$/

/**
 * A text as a header value. Header values are byte strings: a model name with emoji or CJK, or a
 * control character, makes `Headers.set` throw, and once that throw sent the call down its error path
 * a second time. Printable ASCII goes as it is; anything else is sent percent-encoded as UTF-8
 * (`decodeURIComponent` gives the text back), so the header is always there and always valid.
 */
export const headerValue = (text: string): string =>
  // An unpaired surrogate has no UTF-8 (encodeURIComponent throws on it): it goes as U+FFFD.
  PLAIN_HEADER_VALUE.test(text) ? text : encodeURIComponent(text.toWellFormed())
