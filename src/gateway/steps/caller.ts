/** What the caller says about itself in `Gw-*` headers, read once per call. */
export interface Caller {
  userId: string | null
  sessionId: string | null
  /** The caller's own customer the call was made for (`Gw-Customer-Id`), as given. */
  customerId: string | null
  /** The Stripe customer to meter the call's tokens to, when it is shaped like one (`cus_...`). */
  stripeCustomerId: string | null
  /** `Gw-Property-<Name>` values by lower-cased name (header names are case-insensitive). */
  properties: Record<string, string>
  /** A `Gw-RateLimit-Policy` of the caller's own. */
  policy: string | undefined
  /** `Gw-Stream-Meta: frame` asks for the closing `gw` frame of a stream; absent, the organisation's setting decides. */
  metaFrame: boolean | undefined
  /** ISO 3166-1 alpha-2, from the trusted proxy's header; null when unknown. */
  country: string | null
}

const PROPERTY_PREFIX = 'gw-property-'
/** Two letters, or a proxy's two-character code for unknown or anonymised callers (XX, T1). */
const COUNTRY_CODE = /^[A-Z][A-Z0-9]$/
const STRIPE_CUSTOMER = /^cus_[A-Za-z0-9]{1,250}$/

/** `frame` asks for the frame, `none` declines it (whatever the organisation's setting), anything else leaves it to the setting. */
function streamMeta(value: string | null): boolean | undefined {
  const asked = value?.trim().toLowerCase()
  return asked === 'frame' ? true : asked === 'none' ? false : undefined
}

/** A value that is not a Stripe customer id is not sent to Stripe, where it would only be refused. */
function stripeCustomer(value: string | null): string | null {
  const id = value?.trim()
  return id && STRIPE_CUSTOMER.test(id) ? id : null
}

/** Reads the caller's headers; `countryHeader` is the one a trusted proxy in front of gw sets (GW_COUNTRY_HEADER). */
export function readCaller(headers: Headers, countryHeader: string | undefined): Caller {
  const properties: Record<string, string> = {}
  headers.forEach((value, name) => {
    if (name.startsWith(PROPERTY_PREFIX)) properties[name.slice(PROPERTY_PREFIX.length)] = value
  })
  // Anything but a country code is unknown, never guessed.
  const country = countryHeader ? headers.get(countryHeader)?.trim().toUpperCase() : undefined
  return {
    userId: headers.get('gw-user-id'),
    sessionId: headers.get('gw-session-id'),
    customerId: headers.get('gw-customer-id'),
    stripeCustomerId: stripeCustomer(headers.get('gw-stripe-customer-id')),
    properties,
    policy: headers.get('gw-ratelimit-policy') ?? undefined,
    metaFrame: streamMeta(headers.get('gw-stream-meta')),
    country: country && COUNTRY_CODE.test(country) ? country : null,
  }
}
