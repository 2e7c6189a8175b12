import { invalidForm } from './errors';

/** A Discord JSON object as the world stores it (the world imports this module, so it is not imported back). */
type Json = Record<string, unknown>;

/** Message component types this stand-in models: action rows, buttons and (in modals) text inputs. */
export const ComponentType = { ActionRow: 1, Button: 2, TextInput: 4 } as const;
export const ButtonStyle = { Primary: 1, Secondary: 2, Success: 3, Danger: 4, Link: 5, Premium: 6 } as const;
export const TextInputStyle = { Short: 1, Paragraph: 2 } as const;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Validates a message's `components` as Discord does for bots (≤ 5 action rows of ≤ 5 buttons;
 * a non-link button needs a `custom_id` of 1–100 characters, unique in the message; a link button
 * a `url` and no `custom_id`; labels ≤ 80) and returns them as Discord echoes them: every component
 * carries a numeric `id`, assigned depth-first from 1 where the sender gave none.
 */
export function normaliseMessageComponents(raw: unknown, field = 'components'): Json[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw invalidForm([field], 'BASE_TYPE_BAD_TYPE', 'Must be an array.');
  if (raw.length > 5) throw invalidForm([field], 'BASE_TYPE_MAX_LENGTH', 'Must be 5 or fewer in length.');
  const customIds = new Set<string>();
  let next = 1;
  const taken = new Set<number>();
  const collectIds = (c: unknown): void => {
    if (!isObject(c)) return;
    if (typeof c.id === 'number') taken.add(c.id);
    if (Array.isArray(c.components)) c.components.forEach(collectIds);
  };
  raw.forEach(collectIds);
  const idFor = (c: Json): number => {
    if (typeof c.id === 'number') return c.id;
    while (taken.has(next)) next += 1;
    taken.add(next);
    return next;
  };
  return raw.map((row, r) => {
    const path = [field, String(r)];
    if (!isObject(row) || row.type !== ComponentType.ActionRow)
      throw invalidForm([...path, 'type'], 'BASE_TYPE_CHOICES', 'Value must be one of {1}.');
    const children = row.components;
    if (!Array.isArray(children) || children.length === 0 || children.length > 5)
      throw invalidForm(
        [...path, 'components'],
        'BASE_TYPE_BAD_LENGTH',
        'Must be between 1 and 5 in length.',
      );
    const rowId = idFor(row);
    const buttons = children.map((button, b) => {
      const at = [...path, 'components', String(b)];
      if (!isObject(button) || button.type !== ComponentType.Button)
        throw invalidForm([...at, 'type'], 'BASE_TYPE_CHOICES', 'Value must be one of {2}.');
      const style = button.style;
      if (typeof style !== 'number' || style < 1 || style > 6)
        throw invalidForm([...at, 'style'], 'BASE_TYPE_CHOICES', 'Value must be one of {1, 2, 3, 4, 5, 6}.');
      if (button.label !== undefined && (typeof button.label !== 'string' || button.label.length > 80))
        throw invalidForm([...at, 'label'], 'BASE_TYPE_MAX_LENGTH', 'Must be 80 or fewer in length.');
      if (style === ButtonStyle.Link) {
        if (typeof button.url !== 'string' || !/^https?:\/\//.test(button.url))
          throw invalidForm([...at, 'url'], 'BASE_TYPE_REQUIRED', 'This field is required');
        if (button.custom_id !== undefined)
          throw invalidForm(
            [...at, 'custom_id'],
            'BUTTON_COMPONENT_CUSTOM_ID_WITH_URL',
            'A custom id cannot be set for link buttons',
          );
      } else if (style !== ButtonStyle.Premium) {
        const customId = button.custom_id;
        if (typeof customId !== 'string' || customId.length === 0 || customId.length > 100)
          throw invalidForm(
            [...at, 'custom_id'],
            'BASE_TYPE_BAD_LENGTH',
            'Must be between 1 and 100 in length.',
          );
        if (customIds.has(customId))
          throw invalidForm(
            [...at, 'custom_id'],
            'COMPONENT_CUSTOM_ID_DUPLICATED',
            'Component custom id cannot be duplicated',
          );
        customIds.add(customId);
      }
      return { ...button, id: idFor(button) };
    });
    return { type: ComponentType.ActionRow, id: rowId, components: buttons };
  });
}

/**
 * A modal's components (interaction callback type 9): 1–5 action rows of one text input each,
 * `custom_id` 1–100, label 1–45, style 1|2, lengths within 0–4000.
 */
export function normaliseModalComponents(raw: unknown): Json[] {
  const field = 'components';
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > 5)
    throw invalidForm(['data', field], 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 5 in length.');
  let next = 1;
  return raw.map((row, r) => {
    const at = ['data', field, String(r)];
    if (!isObject(row) || row.type !== ComponentType.ActionRow || !Array.isArray(row.components))
      throw invalidForm([...at, 'type'], 'BASE_TYPE_CHOICES', 'Value must be one of {1}.');
    if (row.components.length !== 1)
      throw invalidForm([...at, 'components'], 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 1 in length.');
    const input = row.components[0] as unknown;
    const inputAt = [...at, 'components', '0'];
    if (!isObject(input) || input.type !== ComponentType.TextInput)
      throw invalidForm([...inputAt, 'type'], 'BASE_TYPE_CHOICES', 'Value must be one of {4}.');
    if (typeof input.custom_id !== 'string' || input.custom_id.length === 0 || input.custom_id.length > 100)
      throw invalidForm(
        [...inputAt, 'custom_id'],
        'BASE_TYPE_BAD_LENGTH',
        'Must be between 1 and 100 in length.',
      );
    if (typeof input.label !== 'string' || input.label.length === 0 || input.label.length > 45)
      throw invalidForm([...inputAt, 'label'], 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 45 in length.');
    if (input.style !== TextInputStyle.Short && input.style !== TextInputStyle.Paragraph)
      throw invalidForm([...inputAt, 'style'], 'BASE_TYPE_CHOICES', 'Value must be one of {1, 2}.');
    for (const bound of ['min_length', 'max_length'] as const) {
      const v = input[bound];
      if (v !== undefined && (typeof v !== 'number' || v < 0 || v > 4000))
        throw invalidForm([...inputAt, bound], 'NUMBER_TYPE_MAX', 'int value should be between 0 and 4000.');
    }
    const rowId = next++;
    return { type: ComponentType.ActionRow, id: rowId, components: [{ ...input, id: next++ }] };
  });
}

/**
 * Embed Limits (Message resource, Embed Object): per embed, title ≤ 256, description ≤ 4096,
 * ≤ 25 fields of name ≤ 256 and value ≤ 1024, footer.text ≤ 2048, author.name ≤ 256; those texts
 * together ≤ 6000 characters across all of a message's embeds; at most 10 embeds (Create Message).
 * Lengths are measured after trimming leading and trailing whitespace.
 */
const EMBED_TEXT_LIMITS = {
  title: 256,
  description: 4096,
  fieldName: 256,
  fieldValue: 1024,
  footerText: 2048,
  authorName: 256,
  fields: 25,
  total: 6000,
} as const;

const textLength = (v: unknown): number => (typeof v === 'string' ? v.trim().length : 0);

/** Embeds as Discord echoes them: `type: 'rich'` unless the sender set one; within Discord's limits. */
export function normaliseEmbeds(raw: unknown): Json[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw invalidForm(['embeds'], 'BASE_TYPE_BAD_TYPE', 'Must be an array.');
  if (raw.length > 10)
    throw invalidForm(['embeds'], 'BASE_TYPE_MAX_LENGTH', 'Must be 10 or fewer in length.');
  let total = 0;
  const embeds = raw.map((e, i) => {
    const at = ['embeds', String(i)];
    if (!isObject(e))
      throw invalidForm(at, 'MODEL_TYPE_CONVERT', 'Only dictionaries may be used in a ModelType');
    const within = (path: string[], value: unknown, limit: number): void => {
      const length = textLength(value);
      if (length > limit)
        throw invalidForm(path, 'BASE_TYPE_MAX_LENGTH', `Must be ${limit} or fewer in length.`);
      total += length;
    };
    within([...at, 'title'], e.title, EMBED_TEXT_LIMITS.title);
    within([...at, 'description'], e.description, EMBED_TEXT_LIMITS.description);
    if (e.fields !== undefined && e.fields !== null) {
      if (!Array.isArray(e.fields))
        throw invalidForm([...at, 'fields'], 'BASE_TYPE_BAD_TYPE', 'Must be an array.');
      if (e.fields.length > EMBED_TEXT_LIMITS.fields)
        throw invalidForm(
          [...at, 'fields'],
          'BASE_TYPE_MAX_LENGTH',
          `Must be ${EMBED_TEXT_LIMITS.fields} or fewer in length.`,
        );
      e.fields.forEach((f: unknown, j) => {
        const field = isObject(f) ? f : {};
        within([...at, 'fields', String(j), 'name'], field.name, EMBED_TEXT_LIMITS.fieldName);
        within([...at, 'fields', String(j), 'value'], field.value, EMBED_TEXT_LIMITS.fieldValue);
      });
    }
    if (isObject(e.footer)) within([...at, 'footer', 'text'], e.footer.text, EMBED_TEXT_LIMITS.footerText);
    if (isObject(e.author)) within([...at, 'author', 'name'], e.author.name, EMBED_TEXT_LIMITS.authorName);
    return { type: 'rich', ...e };
  });
  if (total > EMBED_TEXT_LIMITS.total)
    throw invalidForm(
      ['embeds'],
      'MAX_EMBED_SIZE_EXCEEDED',
      `Embed size exceeds maximum size of ${EMBED_TEXT_LIMITS.total}`,
    );
  return embeds;
}

/** A button found by its custom id in a message's components. */
export function findButton(components: readonly Json[], customId: string): Json | null {
  for (const row of components) {
    for (const c of (row.components as Json[] | undefined) ?? []) {
      if (c.type === ComponentType.Button && c.custom_id === customId) return c;
    }
  }
  return null;
}
