/** Spec 4.2's request id: 8-4-4-4-12 hex, version nibble 4, variant 8, 9, a or b; any case. */
export const UUID_V4 = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-4[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$'
