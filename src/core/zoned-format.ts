/**
 * Date formats in a timezone, each built once: building an Intl.DateTimeFormat costs about as
 * much as formatting a hundred dates, and hob formats the same few shapes for every message
 * (the time a message was sent, the day in the system prompt). The zones are IANA names, a
 * bounded set, so the cache is bounded too.
 */

/** A format's locale and fields, without the timezone. Declare each once (it is the cache key). */
export type DateShape = { readonly locale: string; readonly options: Readonly<Omit<Intl.DateTimeFormatOptions, 'timeZone'>> };

const built = new WeakMap<DateShape, Map<string, Intl.DateTimeFormat>>();

/** The shape's formatter for `timezone`. Throws a RangeError for an unknown zone, as Intl does. */
export function zonedFormat(shape: DateShape, timezone: string): Intl.DateTimeFormat {
  let byZone = built.get(shape);
  if (!byZone) built.set(shape, (byZone = new Map()));
  let format = byZone.get(timezone);
  if (!format) byZone.set(timezone, (format = new Intl.DateTimeFormat(shape.locale, { ...shape.options, timeZone: timezone })));
  return format;
}
