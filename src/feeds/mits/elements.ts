// Reading the elements of one scanned MITS <Property> (the scanner's shape, feeds/xml/xml-scanner.ts:
// text as a string, attributes as "@_Name", repeated children as a list, an element with
// attributes and text keeps the text under "#text"). Names match on their local part too, so a feed
// that writes `MITS:UnitRent` (ResMan's GetMarketing4_0 prefixes unit fields) reads as `UnitRent`.
// Everything from the feed is hostile: anything that is not the shape asked for reads as absent.

export type Element = Record<string, unknown>;

const TEXT = '#text';

function isElement(v: unknown): v is Element {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** The value of a child by name (exact, else by local name), as stored: a string, an element or a list. */
function raw(el: unknown, name: string): unknown {
  if (!isElement(el)) return undefined;
  // names asked for are MITS element names, never a name the prototype has
  const v = el[name];
  if (v !== undefined) return v;
  for (const key in el) {
    if (key.length > name.length && key.charCodeAt(key.length - name.length - 1) === 58 && key.endsWith(name))
      return el[key];
  }
  return undefined;
}

/** Every child of that name, as elements or strings, in document order. */
export function children(el: unknown, name: string): unknown[] {
  const v = raw(el, name);
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

/** The first child of that name. */
export function child(el: unknown, name: string): unknown {
  const v = raw(el, name);
  return Array.isArray(v) ? v[0] : v;
}

/** The elements among a node's children of that name (strings, i.e. empty or text-only elements, left out). */
export function elements(el: unknown, name: string): Element[] {
  return children(el, name).filter(isElement);
}

/** The text of a node: a string as it is, an element's "#text"; blank is absent. */
export function textOf(v: unknown): string | undefined {
  const s = typeof v === 'string' ? v : isElement(v) && typeof v[TEXT] === 'string' ? v[TEXT] : undefined;
  return s === undefined || s === '' ? undefined : s;
}

/** The text of the first child of that name, following a dotted path (`PropertyID.MarketingName`). */
export function text(el: unknown, path: string): string | undefined {
  if (path.indexOf('.') < 0) return textOf(child(el, path));
  let node: unknown = el;
  for (const seg of path.split('.')) {
    node = child(node, seg);
    if (node === undefined) return undefined;
  }
  return textOf(node);
}

/** An attribute of an element (`@_IDValue`); blank is absent. */
export function attr(el: unknown, name: string): string | undefined {
  if (!isElement(el)) return undefined;
  const v = el[`@_${name}`];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** The first element of those named whose attribute `name` matches `test` (case-insensitive), else the first. */
export function preferred(list: Element[], name: string, test: RegExp): Element | undefined {
  return list.find((e) => test.test(attr(e, name) ?? '')) ?? list[0];
}

/** A MITS date, `<VacateDate Month="3" Day="20" Year="2027"/>` (or its text, `2027-03-20`), as YYYY-MM-DD; absent when it is not a date. */
export function mitsDate(el: unknown): string | undefined {
  const y = Number(attr(el, 'Year'));
  const m = Number(attr(el, 'Month'));
  const d = Number(attr(el, 'Day'));
  if (
    Number.isInteger(y) &&
    Number.isInteger(m) &&
    Number.isInteger(d) &&
    y >= 1900 &&
    y <= 2200 &&
    m >= 1 &&
    m <= 12 &&
    d >= 1 &&
    d <= 31
  ) {
    return `${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
  }
  const t = textOf(el);
  const iso = t === undefined ? null : /^(\d{4})-(\d{2})-(\d{2})/.exec(t);
  return iso ? `${iso[1]}-${iso[2]}-${iso[3]}` : undefined;
}

/** A price as the feed wrote it, or absent when it is not a positive number (feeds write 0 or 0.00 for "unknown"). */
export function amount(v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  const n = Number(v.replace(/[$,\s]/g, ''));
  return Number.isFinite(n) && n > 0 ? v : undefined;
}
