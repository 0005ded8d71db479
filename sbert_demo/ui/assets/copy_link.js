(query, note) => {
  // Copy link: the full URL of the current view into the clipboard (and the link box).
  if (!query) { return [query, note]; }
  const url = window.location.origin + window.location.pathname + query;
  if (navigator.clipboard) { navigator.clipboard.writeText(url).catch(() => {}); }
  return [url, note];
}
