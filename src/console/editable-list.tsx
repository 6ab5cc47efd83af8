import { type ComponentChildren, Fragment } from 'preact'
import { useState } from 'preact/hooks'
import { api } from './api'
import { ErrorNote, useAction, useList } from './ui'

/** What an item shown in the list may ask of it. */
export interface ItemActions {
  /** Shows the item's form in its place. */
  edit(): void
  /** Deletes the item (DELETE on its path), then reads the list again. */
  remove(): void
  /** Reads the list again, after the item changed by other means (a probe, a key). */
  changed(): void
}

/** What a form is given: the item was saved (the list is read again), or, for an item being edited, left as it was. */
export interface FormDone {
  onSaved(): void
  onCancel?(): void
}

/**
 * The organisation's records of one kind, as the API lists them at `path`: each shown by `show`, or
 * by `form` in its place while it is edited, then a blank `form` for a new one (for those who may
 * write). Each change reads the list again, and a failure to read or delete is shown above it.
 */
export function EditableList<T extends { id: string }>({
  path,
  canWrite,
  empty,
  show,
  form,
  listClass,
  onChanged,
  onRemoved,
  children,
}: {
  /** The list's path; an item is deleted at `${path}/${id}`. */
  path: string
  canWrite: boolean
  /** What an empty list says. */
  empty: ComponentChildren
  show(item: T, actions: ItemActions): ComponentChildren
  form(item: T | undefined, done: FormDone): ComponentChildren
  /** The items are a list (`<ul class=…>`) whose `<li>`s `show` and `form` give. */
  listClass?: string
  /** After every change: what depends on the list is read again. */
  onChanged?(): void
  onRemoved?(item: T): void
  /** What follows the list and changes it too (a catalogue that registers items): given the list's refresh. */
  children?(refresh: () => void): ComponentChildren
}) {
  const { items, error, change } = useList<T>(path)
  const [editing, setEditing] = useState<string>()
  // Each item made starts the next form afresh.
  const [made, setMade] = useState(0)
  const refresh = () => change(async () => onChanged?.())
  const remove = (item: T) =>
    change(async () => {
      await api('DELETE', `${path}/${encodeURIComponent(item.id)}`)
      if (editing === item.id) setEditing(undefined)
      onRemoved?.(item)
      onChanged?.()
    })
  const shown = items?.map((item) => (
    <Fragment key={item.id}>
      {editing === item.id
        ? form(item, {
            onSaved: () => {
              setEditing(undefined)
              refresh()
            },
            onCancel: () => setEditing(undefined),
          })
        : show(item, { edit: () => setEditing(item.id), remove: () => remove(item), changed: refresh })}
    </Fragment>
  ))
  return (
    <>
      <ErrorNote error={error} />
      {!items && !error && <p class="muted">Loading…</p>}
      {items && items.length === 0 && <p class="muted">{empty}</p>}
      {items && items.length > 0 && (listClass ? <ul class={listClass}>{shown}</ul> : shown)}
      {canWrite && (
        <Fragment key={`new-${made}`}>
          {form(undefined, {
            onSaved: () => {
              setMade((count) => count + 1)
              refresh()
            },
          })}
        </Fragment>
      )}
      {children?.(refresh)}
    </>
  )
}

/** An item's Edit and Delete buttons, named for a screen reader by what they act on. */
export function EditAndDelete({ name, actions }: { name: string; actions: ItemActions }) {
  return (
    <>
      <button type="button" class="quiet" onClick={actions.edit} aria-label={`Edit ${name}`}>
        Edit
      </button>
      <button type="button" class="danger" onClick={actions.remove} aria-label={`Delete ${name}`}>
        Delete
      </button>
    </>
  )
}

/**
 * A form of a list's item, new or edited in its place (a card then), or of a part of one (its key):
 * its fields, the API's refusal beside them, and its buttons, Cancel where it can be put away. `send`
 * reads the fields and sends them; `onSaved` is told once it went through.
 */
export function ItemForm({
  name,
  legend = name,
  kind,
  editing,
  submit,
  send,
  onSaved,
  onCancel,
  children,
}: {
  /** What the form is called, to a screen reader and (unless `legend` says otherwise) on its frame. */
  name: string
  legend?: string
  /** Its class, `<kind>-form`, which the page's styles know it by. */
  kind: string
  editing: boolean
  /** The submit button's label. */
  submit: string
  send(form: HTMLFormElement): Promise<unknown>
  children: ComponentChildren
} & FormDone) {
  const { error, run } = useAction()
  const save = async (event: Event) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    if (await run(() => send(form))) onSaved()
  }
  return (
    <form class={`setting ${editing ? 'card ' : ''}${kind}-form`} onSubmit={save} aria-label={name}>
      <fieldset>
        <legend>{legend}</legend>
        {children}
        <ErrorNote error={error} />
        <div class="actions">
          <button type="submit">{submit}</button>
          {onCancel && (
            <button type="button" class="quiet" onClick={onCancel}>
              Cancel
            </button>
          )}
        </div>
      </fieldset>
    </form>
  )
}
