import type { z } from "@hono/zod-openapi";

/**
 * Characters that change how a name reads without being seen: control characters (C0 and C1),
 * format characters (zero-width U+200B-U+200D, U+2060, U+FEFF; the bidi controls U+200E, U+200F,
 * U+202A-U+202E, U+2066-U+2069, U+061C, which can make a name display reversed; soft hyphens,
 * tags...), the line and paragraph separators, and every other character Unicode says to render
 * as nothing when unsupported (Default_Ignorable_Code_Point: fillers such as U+3164, variation
 * selectors outside an emoji, U+034F).
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/u;
/** A character that shows as something: not a space, not invisible, not the blank braille pattern. */
const SHOWN = /[^\s\p{Default_Ignorable_Code_Point}\u2800]/u;
const EVERY_INVISIBLE = new RegExp(INVISIBLE.source, "gu");

/**
 * Unicode's recommended emoji, sequences included: those joined by U+200D (a family, a
 * profession) and the flags spelt with tag characters. Each shows as one picture, so the format
 * characters inside one hide nothing. (The `v` flag: not a literal, which ES2022 does not parse.)
 */
const EVERY_EMOJI = new RegExp("\\p{RGI_Emoji}", "gv");

/**
 * A name's schema that refuses invisible characters (400 on the field), so that no name can pass
 * for another on screen: `visibleName(z.string().trim().min(1).max(200))`. Those inside an emoji
 * sequence are part of the emoji, as names in PostHog and in Terraform configurations have them.
 */
export const visibleName = <T extends z.ZodString>(schema: T) =>
  schema
    .refine((value) => value === "" || SHOWN.test(value), {
      message: "This field may not be blank.",
      params: { code: "blank" },
    })
    .refine(
      (value) => !INVISIBLE.test(value.replace(EVERY_EMOJI, "")),
      "Names may not contain invisible or control characters (zero-width, bidirectional or other format characters).",
    );

/**
 * What a name that must be unique is compared by: NFKC (so that composed and decomposed accents,
 * full-width letters, ligatures and other compatibility forms are one), invisible characters
 * dropped (names stored before they were refused), then case folded. Upper- then lower-casing
 * approximates Unicode's full case folding (`ß` and `SS`, `ς` and `Σ`), and NFKC runs again
 * because folding can leave a string unnormalised (`ǰ` upper-cases to `J` and a combining caron).
 */
export function nameKey(name: string): string {
  return name.normalize("NFKC").replace(EVERY_INVISIBLE, "").toUpperCase().toLowerCase().normalize("NFKC");
}
