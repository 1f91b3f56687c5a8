/// <reference lib="dom" />
/**
 * The web viewer's token handling: the token comes from the address's fragment (`#token=…`), which the
 * browser never sends, is removed from the address bar, and is kept in this tab's sessionStorage only.
 *
 * @module
 */

/** The sessionStorage key the token is kept under. */
export const TOKEN_KEY = "specter.token";

/** The address's fragment as parameters (`#token=…&session=…`). */
export function fragment(): URLSearchParams {
  return new URLSearchParams(location.hash.replace(/^#/, ""));
}

/** The token: from the fragment (then removed from the address bar), else this tab's storage. */
export function takeToken(): string | null {
  const params = fragment();
  const token = params.get("token");
  if (token !== null && token !== "") {
    sessionStorage.setItem(TOKEN_KEY, token);
    params.delete("token");
    const rest = params.toString();
    history.replaceState(null, "", location.pathname + location.search + (rest === "" ? "" : `#${rest}`));
    return token;
  }
  return sessionStorage.getItem(TOKEN_KEY);
}
