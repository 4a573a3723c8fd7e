/**
 * The merchant's return URL if it is an absolute http(s) URL, else undefined:
 * the core validates it on order creation, and the page checks again before
 * putting it in a link, so a javascript: or data: URL can never be clicked.
 */
export function safeReturnUrl(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.href : undefined;
  } catch {
    return undefined;
  }
}
