import { remembered } from './remembered'

/**
 * A base URL without its trailing slashes, so a path can follow it. Every provider call joins its
 * connection's base URL to a path; a deployment has a handful of them, so each is trimmed once rather
 * than with a regular expression made and run on every call.
 */
export const withoutTrailingSlashes = remembered((url) => url.replace(/\/+$/, ''))
