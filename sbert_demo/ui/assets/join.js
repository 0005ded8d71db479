// The room's phone page (/join/CODE, the board's QR code): the board's name and model, one box and Send, then
// where the sentence landed (its nearest sentences on the board and its group for now), asked again while the
// page is in view, as the board grows. Plain requests to the app's /join/CODE/... routes (sbert_demo/ui/join.py):
// no Gradio page, session or queue per phone. Every text from the server or the room is set as text, never as HTML.
(() => {
  "use strict";
  const REGROUP_S = 15;       // the group asked again this often while the page is in view
  const FOLLOW_FOR_S = 900;   // ...for this long after a send: the talk's room step is over by then
  const ANSWER_S = 30;        // a request with no answer by then is given up, and said so
  const $ = (id) => document.getElementById(id);
  const slot = location.pathname.match(/\/join\/([^/]+)$/);  // "/join/" itself: the code is typed
  let code = slot ? decodeURIComponent(slot[1]) : "";
  let about = null;
  let following = null;  // {id, sentence, until, timer}

  function say(element, ...parts) {
    element.replaceChildren(...parts.map((part) => (typeof part === "string" ? document.createTextNode(part) : part)));
  }
  function make(tag, text, className) {
    const element = document.createElement(tag);
    if (text !== undefined) element.textContent = text;
    if (className) element.className = className;
    return element;
  }
  function showError(sentence) {
    const box = $("join-error");
    say(box, sentence);
    box.hidden = !sentence;
  }

  async function ask(url, options = {}) {
    const stop = new AbortController();
    const timer = setTimeout(() => stop.abort(), ANSWER_S * 1000);
    try {
      const response = await fetch(url, { ...options, signal: stop.signal, credentials: "same-origin" });
      let body = {};
      try { body = await response.json(); } catch (_) { body = {}; }
      if (!response.ok) {
        const error = new Error(body.error || `The app answered ${response.status}; try again in a moment.`);
        error.answered = true;
        throw error;
      }
      return body;
    } catch (error) {
      if (error.answered) throw error;
      const lost = new Error(error.name === "AbortError" ? `The app did not answer within ${ANSWER_S} s.`
        : "The app could not be reached: check the phone's connection.");
      lost.unanswered = true;
      throw lost;
    } finally {
      clearTimeout(timer);
    }
  }
  const api = (rest) => `${encodeURIComponent(code)}/${rest}`;

  function showAbout() {
    const count = about.sentences === 1 ? "1 sentence" : `${about.sentences} sentences`;
    say($("join-title"), `Send a sentence to board ${about.code}`);
    say($("join-about"), about.locked ? `Board ${about.code} is closed to new sentences: the presenter has locked it.`
      : `Shown under ${about.model_label} · ${count} on the board so far.`);
    $("join-form").hidden = false;
    $("join-send").disabled = about.locked;
    $("join-sentence").maxLength = about.max_chars;
    counted();
  }

  function counted() {
    const box = $("join-sentence");
    say($("join-count"), `${box.value.length} / ${box.maxLength}`);
  }

  async function open() {
    if (!code) {
      say($("join-about"), "Type the board's code to send it a sentence.");
      $("join-code-form").hidden = false;
      return;
    }
    try {
      about = await ask(api("about"));
      if (about.code !== code) history.replaceState(null, "", encodeURIComponent(about.code));
      code = about.code;
      showAbout();
    } catch (error) {
      say($("join-about"), "");
      showError(error.message);
      $("join-code-form").hidden = false;
      $("join-code").value = code;
    }
  }

  function landed(where) {
    const box = $("join-landed");
    const parts = [make("p", `Sent: “${where.sentence}”`)];
    if (where.nearest.length) {
      parts.push(make("p", `Closest on the board under ${where.model_label}:`));
      const list = make("ol");
      for (const item of where.nearest) {
        const row = make("li");
        row.append(make("span", item.cosine.toFixed(2), "join-cosine"), document.createTextNode(item.sentence));
        list.append(row);
      }
      parts.push(list);
    } else {
      parts.push(make("p", "You are the first on the board: look at the screen as others join."));
    }
    if (where.cluster) {
      const line = make("p");
      line.append("For now it is in the group ", make("span", where.cluster, "join-group"),
        ", as the screen draws it; the groups change as more sentences arrive");
      const time = new Date().toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
      line.append(` (asked again every ${REGROUP_S} s; last at ${time}).`);
      parts.push(line);
    }
    box.replaceChildren(...parts);
    box.hidden = false;
  }

  async function follow() {
    const now = following;
    if (!now) return;
    clearTimeout(now.timer);
    if (document.visibilityState !== "visible") return;  // asked again when the page is seen again
    try {
      landed(await ask(api(`landing/${now.id}`)));
    } catch (error) {
      if (error.answered) {  // hidden by the presenter, the board cleared: said, and not asked again
        say($("join-landed"), make("p", `Sent: “${now.sentence}”`), make("p", error.message));
        following = null;
        return;
      }
    }
    if (following === now && Date.now() < now.until) {
      now.timer = setTimeout(follow, REGROUP_S * 1000);
    }
  }

  async function send(event) {
    event.preventDefault();
    const box = $("join-sentence");
    const sentence = box.value.trim();
    if (!sentence) { showError("Write a sentence first."); return; }
    showError("");
    $("join-send").disabled = true;
    try {
      const sent = await ask(api("send"), {
        method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ sentence }),
      });
      box.value = "";
      counted();
      if (following) clearTimeout(following.timer);
      following = { id: sent.id, sentence: sent.sentence, until: Date.now() + FOLLOW_FOR_S * 1000, timer: 0 };
      say($("join-landed"), make("p", `Sent: “${sent.sentence}”`), make("p", "Finding where it landed on the board…"));
      $("join-landed").hidden = false;
      about.sentences = sent.sentences;
      showAbout();
      follow();
    } catch (error) {
      showError(error.unanswered ? `${error.message} Your sentence may be on the board already: look at the `
        + "screen before sending it again." : error.message);
    } finally {
      $("join-send").disabled = Boolean(about && about.locked);
    }
  }

  document.addEventListener("DOMContentLoaded", () => {
    $("join-form").addEventListener("submit", send);
    $("join-sentence").addEventListener("input", counted);
    $("join-sentence").addEventListener("keydown", (event) => {  // Enter sends, as a chat does; Shift+Enter breaks
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) send(event);
    });
    $("join-code-form").addEventListener("submit", (event) => {
      event.preventDefault();
      const typed = $("join-code").value.replace(/[\s-]+/g, "").toUpperCase();
      location.href = encodeURIComponent(typed);  // beside this page: /join/TYPED
    });
    document.addEventListener("visibilitychange", () => { if (following) follow(); });
    open();
  });
})();
