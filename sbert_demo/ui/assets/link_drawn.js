async (picker) => {
  // A link's values wait for its tab to be drawn: a tab draws its components only once selected, and a
  // value sent before its picker is on the page can be lost (ui/sharing.py). Up to 10 s, then on anyway.
  const start = performance.now();
  while (picker && !document.getElementById(picker) && performance.now() - start < 10000) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  return picker;
}
