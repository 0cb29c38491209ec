// The `<org-slug>/<slug>` rule: a code's slug is stored prefixed with its organization's slug, so
// one unique index covers every organization and the fallback origins serve `/<org-slug>/<slug>`.
// Slugs are unique case-insensitively: the key of a stored slug is its lower case.

/** The slug as stored: '<org-slug>/<slug>'. */
export function storedSlug(orgSlug: string, slug: string): string {
  return `${orgSlug}/${slug}`;
}

/** The case-insensitive key of a stored slug (the unique index and the redirect's lookups). */
export function slugKey(orgSlug: string, slug: string): string {
  return storedSlug(orgSlug, slug).toLowerCase();
}

/** The code's own part of a stored slug (organization slugs hold no '/'). */
export function publicSlug(stored: string): string {
  return stored.slice(stored.indexOf('/') + 1);
}
