// HTML text for the server-rendered pages of every listener (the redirect's visitor pages, the
// OAuth sign-in and consent pages): user-provided text always goes through escapeHtml.

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
