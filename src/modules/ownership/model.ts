import { t } from '../../util/typebox'

export const OrgParams = t.Object({ id: t.String() })

export const TransferOwnerBody = t.Object({ userId: t.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false })

export const OwnershipTransfer = t.Object({
  id: t.String({ description: 'the new Owner' }),
  ownerId: t.String({ description: 'the new Owner' }),
  previousOwnerId: t.String({ description: 'the old Owner, now an Admin' }),
})
