/** An absolute http(s) URL without credentials in it. */
export const isHttpUrl = (s: string): boolean => {
  try {
    const url = new URL(s)
    return (
      (url.protocol === "http:" || url.protocol === "https:") && url.username === "" && url.password === ""
    )
  } catch {
    return false
  }
}
