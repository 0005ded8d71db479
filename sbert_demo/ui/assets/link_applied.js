() => {
  // The page is ready: the pickers refreshed and a link's tab and values applied (ui/sharing.py). Screenshot
  // tools and the browser tests wait for this mark instead of a fixed pause.
  document.documentElement.dataset.linked = "yes";
}
