import {
  type Condition,
  FILTER_FIELDS,
  fieldType,
  type Group,
  newCondition,
  OPERATOR_LABELS,
  OPERATORS,
  PROPERTY_FIELD,
} from './filter-tree'

/** Groups nest this deep at most: deeper trees are legal for the API, but not readable as a form. */
const MAX_DEPTH = 3

/** How each type's value is typed in (booleans have their own select). */
const INPUT_OF = {
  text: { type: 'text' },
  number: { type: 'number', step: 'any' },
  time: { type: 'datetime-local' },
} as const

const typedValue = (event: Event) => (event.currentTarget as HTMLInputElement | HTMLSelectElement).value

/**
 * The filter tree as a form: each group matches all (and) or any (or) of its conditions and groups.
 * Every control is labelled by its place (`Field 2`, `Value 3.1`), so a screen reader and a test can
 * tell the rows apart.
 */
export function FilterBuilder({ tree, onChange }: { tree: Group; onChange(tree: Group): void }) {
  return <GroupEditor group={tree} place="" depth={1} onChange={onChange} />
}

function GroupEditor({
  group,
  place,
  depth,
  onChange,
  onRemove,
}: {
  group: Group
  place: string
  depth: number
  onChange(group: Group): void
  onRemove?(): void
}) {
  const setChild = (index: number, child: Condition | Group | undefined) =>
    onChange({
      ...group,
      children: child
        ? group.children.map((existing, i) => (i === index ? child : existing))
        : group.children.filter((_, i) => i !== index),
    })
  const add = (child: Condition | Group) => onChange({ ...group, children: [...group.children, child] })
  const name = place === '' ? 'filter' : `group ${place}`
  return (
    <fieldset class="filter-group">
      <legend>
        <label class="match">
          Match
          <select
            aria-label={`Match (${name})`}
            value={group.operator}
            onChange={(event) => onChange({ ...group, operator: typedValue(event) as Group['operator'] })}
          >
            <option value="and">all of (and)</option>
            <option value="or">any of (or)</option>
          </select>
        </label>
      </legend>
      {group.children.length === 0 && <p class="muted">No conditions: every request.</p>}
      {group.children.map((child, index) => {
        const childPlace = place === '' ? String(index + 1) : `${place}.${index + 1}`
        return child.kind === 'group' ? (
          <GroupEditor
            key={childPlace}
            group={child}
            place={childPlace}
            depth={depth + 1}
            onChange={(changed) => setChild(index, changed)}
            onRemove={() => setChild(index, undefined)}
          />
        ) : (
          <ConditionEditor
            key={childPlace}
            condition={child}
            place={childPlace}
            onChange={(changed) => setChild(index, changed)}
            onRemove={() => setChild(index, undefined)}
          />
        )
      })}
      <div class="actions">
        <button type="button" class="quiet" onClick={() => add(newCondition())}>
          Add condition{place === '' ? '' : ` to group ${place}`}
        </button>
        {depth < MAX_DEPTH && (
          <button
            type="button"
            class="quiet"
            onClick={() => add({ kind: 'group', operator: group.operator === 'and' ? 'or' : 'and', children: [newCondition()] })}
          >
            Add group{place === '' ? '' : ` to group ${place}`}
          </button>
        )}
        {onRemove && (
          <button type="button" class="quiet" onClick={onRemove}>
            Remove group {place}
          </button>
        )}
      </div>
    </fieldset>
  )
}

function ConditionEditor({
  condition,
  place,
  onChange,
  onRemove,
}: {
  condition: Condition
  place: string
  onChange(condition: Condition): void
  onRemove(): void
}) {
  const type = condition.field === PROPERTY_FIELD ? 'text' : fieldType(condition.field)
  const chooseField = (field: string) => {
    const nextType = field === PROPERTY_FIELD ? 'text' : fieldType(field)
    const operator = OPERATORS[nextType].includes(condition.operator) ? condition.operator : 'equals'
    onChange({ ...condition, field, operator, value: nextType === type ? condition.value : nextType === 'boolean' ? 'true' : '' })
  }
  return (
    <div class="condition">
      <select aria-label={`Field ${place}`} value={condition.field} onChange={(event) => chooseField(typedValue(event))}>
        {Object.entries(FILTER_FIELDS).map(([field, { label }]) => (
          <option key={field} value={field}>
            {label}
          </option>
        ))}
        <option value={PROPERTY_FIELD}>Property…</option>
      </select>
      {condition.field === PROPERTY_FIELD && (
        <input
          aria-label={`Property name ${place}`}
          placeholder="property name"
          pattern="[A-Za-z0-9_\-]{1,64}"
          value={condition.property}
          onInput={(event) => onChange({ ...condition, property: typedValue(event) })}
        />
      )}
      <select
        aria-label={`Operator ${place}`}
        value={condition.operator}
        onChange={(event) => onChange({ ...condition, operator: typedValue(event) })}
      >
        {OPERATORS[type].map((operator) => (
          <option key={operator} value={operator}>
            {OPERATOR_LABELS[operator] ?? operator}
          </option>
        ))}
      </select>
      {type === 'boolean' ? (
        <select
          aria-label={`Value ${place}`}
          value={condition.value}
          onChange={(event) => onChange({ ...condition, value: typedValue(event) })}
        >
          <option value="true">yes</option>
          <option value="false">no</option>
        </select>
      ) : (
        <input
          aria-label={`Value ${place}`}
          {...INPUT_OF[type]}
          value={condition.value}
          onInput={(event) => onChange({ ...condition, value: typedValue(event) })}
        />
      )}
      <button type="button" class="quiet" aria-label={`Remove condition ${place}`} onClick={onRemove}>
        ✕
      </button>
    </div>
  )
}
