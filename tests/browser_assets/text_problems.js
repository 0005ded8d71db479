() => {
  // What people would see wrong on this screen, measured in the DOM: text cut by its box or by the
  // figure it belongs to, texts of one figure drawn over each other, and anything wider than the screen.
  // Returns a list of sentences (empty: nothing wrong).
  const problems = [];
  const width = document.documentElement.clientWidth;
  const name = (el) => (el.closest("[id]") || {}).id || el.tagName;
  const shown = (el) => {
    for (let node = el; node && node.nodeType === 1; node = node.parentElement) {
      const style = getComputedStyle(node);
      if (style.display === "none" || style.visibility === "hidden" || Number(style.opacity) === 0) { return false; }
    }
    const box = el.getBoundingClientRect();
    return box.width > 0 && box.height > 0;
  };
  const overlap = (a, b) => Math.max(0, Math.min(a.right, b.right) - Math.max(a.left, b.left)) *
                            Math.max(0, Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top));
  if (document.documentElement.scrollWidth > width + 1) {
    problems.push(`the page is ${document.documentElement.scrollWidth} px wide on a ${width} px screen`);
  }
  // Figures: every text inside its figure, and no two texts of a figure on top of each other.
  document.querySelectorAll(".js-plotly-plot").forEach((gd) => {
    if (!shown(gd)) { return; }
    const frame = gd.getBoundingClientRect();
    const texts = [...gd.querySelectorAll("svg text")]
      .filter((t) => t.textContent.trim() && !t.closest(".hoverlayer") && shown(t))
      .map((t) => ({text: t.textContent.trim(), box: t.getBoundingClientRect()}));
    texts.forEach(({text, box}) => {
      if (box.left < frame.left - 1 || box.right > frame.right + 1 || box.top < frame.top - 1 || box.bottom > frame.bottom + 1) {
        problems.push(`"${text.slice(0, 40)}" is cut by its figure (${name(gd)})`);
      }
      if (box.right > width + 1 || box.left < -1) { problems.push(`"${text.slice(0, 40)}" is off the screen (${name(gd)})`); }
    });
    for (let i = 0; i < texts.length; i++) {
      for (let j = i + 1; j < texts.length; j++) {
        const area = overlap(texts[i].box, texts[j].box);
        const smaller = Math.min(texts[i].box.width * texts[i].box.height, texts[j].box.width * texts[j].box.height);
        if (area > 0.1 * smaller && area > 4) {
          problems.push(`"${texts[i].text.slice(0, 30)}" and "${texts[j].text.slice(0, 30)}" overlap (${name(gd)})`);
        }
      }
    }
  });
  // The page's own text: nothing cut by its box (buttons, headings, captions, cells), nothing past the screen's edge.
  const scrolls = (el) => {
    for (let node = el.parentElement; node; node = node.parentElement) {
      const style = getComputedStyle(node);
      if (["auto", "scroll"].includes(style.overflowX) && node.scrollWidth > node.clientWidth) { return true; }
    }
    return false;
  };
  document.querySelectorAll("button, h1, h2, h3, p, li, label, td, th, summary, code, .talk-wait, .room-line")
    .forEach((el) => {
      if (!el.textContent.trim() || !shown(el) || el.closest(".js-plotly-plot") || el.closest(".hidden-check")) { return; }
      const box = el.getBoundingClientRect();
      const style = getComputedStyle(el);
      if (el.scrollWidth > el.clientWidth + 1 && style.overflowX !== "visible" && !["auto", "scroll"].includes(style.overflowX)) {
        problems.push(`"${el.textContent.trim().slice(0, 40)}" is cut by its box (${name(el)})`);
      } else if (el.tagName === "BUTTON") {  // its words (not its icons) inside it
        const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          if (!node.textContent.trim() || /^[\u25b2-\u25bf\u00d7]+$/.test(node.textContent.trim())) { continue; }
          const range = document.createRange();
          range.selectNodeContents(node);
          const words = range.getBoundingClientRect();
          if (words.left < box.left - 1 || words.right > box.right + 1) {
            problems.push(`the button "${el.textContent.trim().slice(0, 40)}" is too narrow for its text (${name(el)})`);
            break;
          }
        }
      }
      if ((box.right > width + 1 || box.left < -1) && !scrolls(el)) {
        problems.push(`"${el.textContent.trim().slice(0, 40)}" goes past the screen's edge (${name(el)})`);
      }
    });
  // Menus: the chosen option's words inside the menu (a native select, or a Gradio dropdown's field), its arrow
  // and padding beside them.
  const context = document.createElement("canvas").getContext("2d");
  document.querySelectorAll("select, input[role='combobox'], input[aria-autocomplete='list']").forEach((el) => {
    if (!shown(el)) { return; }
    const text = el.tagName === "SELECT" ? (el.selectedOptions[0] || {}).text || "" : el.value || "";
    if (!text.trim()) { return; }
    const style = getComputedStyle(el);
    context.font = `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
    let room = el.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight)
      - (el.tagName === "SELECT" ? 16 : 0);  // a native select's arrow
    const field = el.getBoundingClientRect();
    const icons = el.closest(".wrap") ? [...el.closest(".wrap").querySelectorAll(".icon-wrap")] : [];
    icons.forEach((icon) => {  // a Gradio dropdown's arrow is drawn over the end of its field
      const box = icon.getBoundingClientRect();
      if (shown(icon) && box.left < field.right && box.right > field.left && box.top < field.bottom && box.bottom > field.top) {
        room = Math.min(room, box.left - field.left - parseFloat(style.paddingLeft) - 2);
      }
    });
    if (context.measureText(text).width > room + 1) {
      problems.push(`the menu's choice "${text.slice(0, 40)}" is cut (${name(el)})`);
    }
  });
  return [...new Set(problems)];
}
