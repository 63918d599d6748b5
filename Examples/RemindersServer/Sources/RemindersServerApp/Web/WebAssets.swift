/// The web app's script and style, served from memory: no build step.
enum WebAssets {
    /// Refreshes `<main>` when the server says what it shows changed, keeping
    /// what the person was typing and where the focus was. Without it (or
    /// without JavaScript) every page still works: each action is a form.
    static let script = """
        // Live pages: /web/events says "change"; the page fetches itself and swaps <main>.
        const main = document.getElementById("main");
        const live = main && main.dataset.live;
        let refreshing = false, again = false;
        async function refresh() {
          if (refreshing) { again = true; return; }
          refreshing = true;
          try {
            const answer = await fetch(location.href, { credentials: "same-origin", headers: { "Accept": "text/html" } });
            if (!answer.ok) return;
            const fresh = new DOMParser().parseFromString(await answer.text(), "text/html").getElementById("main");
            if (!fresh) return;
            const focused = document.activeElement && document.activeElement.id ? document.activeElement : null;
            const typed = focused && "value" in focused ? focused.value : null;
            main.replaceChildren(...Array.from(fresh.childNodes, (node) => document.importNode(node, true)));
            if (focused) {
              const again = document.getElementById(focused.id);
              if (again) { if (typed !== null) again.value = typed; again.focus(); }
            }
            document.documentElement.dataset.refreshes = String(Number(document.documentElement.dataset.refreshes || 0) + 1);
          } finally {
            refreshing = false;
            if (again) { again = false; refresh(); }
          }
        }
        // Search as you type: the page's address follows the field, and the results are fetched as a refresh.
        let typing;
        document.addEventListener("input", (event) => {
          const field = event.target;
          if (!(field instanceof HTMLInputElement) || !field.hasAttribute("data-as-you-type")) return;
          clearTimeout(typing);
          typing = setTimeout(() => {
            const address = "/web/search?q=" + encodeURIComponent(field.value);
            if (location.pathname !== "/web/search") { location.assign(address); return; }
            history.replaceState(null, "", address);
            refresh();
          }, 150);
        });
        // A move's buttons (the keyboard's way to reorder) post without leaving the page; the focus stays on the button.
        document.addEventListener("submit", async (event) => {
          const form = event.target, button = event.submitter;
          if (!(form instanceof HTMLFormElement) || !button || !button.classList.contains("move")) return;
          event.preventDefault();
          const body = new URLSearchParams(new FormData(form));
          body.set(button.name, button.value);
          await fetch(button.formAction, { method: "POST", body, credentials: "same-origin" });
          await refresh();
          if (button && button.id) { const again = document.getElementById(button.id); if (again) again.focus(); }
        });
        // Reorder by dragging a reminder's handle (a mouse, a pen or a finger): the row follows the pointer,
        // and where it is let go is posted as a move before its new next neighbour.
        document.addEventListener("pointerdown", (event) => {
          const handle = event.target instanceof Element ? event.target.closest(".handle") : null;
          const item = handle && handle.closest("li[data-id]"), list = item && item.parentElement;
          if (!item || !list || !list.dataset.csrf) return;
          event.preventDefault();
          item.classList.add("dragging");
          // The document hears the pointer: moving the row in the page would end a capture by the handle.
          const pointer = event.pointerId;
          const follow = (e) => {
            if (e.pointerId !== pointer) return;
            const over = Array.from(list.children).find((li) => {
              if (li === item) return false;
              const box = li.getBoundingClientRect();
              return e.clientY >= box.top && e.clientY < box.bottom;
            });
            if (!over) return;
            const box = over.getBoundingClientRect();
            list.insertBefore(item, e.clientY < box.top + box.height / 2 ? over : over.nextSibling);
          };
          const drop = async (e) => {
            if (e.pointerId !== pointer) return;
            document.removeEventListener("pointermove", follow);
            document.removeEventListener("pointerup", drop);
            document.removeEventListener("pointercancel", drop);
            item.classList.remove("dragging");
            const next = item.nextElementSibling;
            const body = new URLSearchParams({ csrf: list.dataset.csrf, before: next ? next.dataset.id : "" });
            const answer = await fetch("/web/reminders/" + item.dataset.id + "/move", { method: "POST", body, credentials: "same-origin" });
            document.documentElement.dataset.moved = String(answer.status);
            refresh();
          };
          document.addEventListener("pointermove", follow);
          document.addEventListener("pointerup", drop);
          document.addEventListener("pointercancel", drop);
        });
        if (live && "EventSource" in window) {
          const events = new EventSource(live);
          events.addEventListener("change", refresh);
          events.addEventListener("open", () => { document.documentElement.dataset.live = "open"; });
        }
        """

    /// One column, readable on a phone and a desktop; focus always visible.
    static let style = """
        :root { font-family: system-ui, sans-serif; line-height: 1.4; color: #1c1c1e; background: #f2f2f7; }
        body { margin: 0 auto; max-width: 40rem; padding: 0 1rem 2rem; }
        header { display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: .5rem; padding: .75rem 0; }
        header .home { font-weight: 600; text-decoration: none; color: inherit; }
        nav, form.inline { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem; }
        nav form { display: inline; }
        h1 { font-size: 1.6rem; margin: .5rem 0 1rem; overflow-wrap: anywhere; }
        ul { list-style: none; padding: 0; margin: 0 0 1rem; background: #fff; border-radius: .75rem; }
        li { display: flex; align-items: center; gap: .5rem; padding: .6rem .75rem; border-bottom: 1px solid #e5e5ea; min-width: 0; }
        li:last-child { border-bottom: none; }
        li a { display: flex; align-items: center; gap: .5rem; flex: 1; min-width: 0; color: inherit; text-decoration: none; }
        .title { flex: 1; min-width: 0; overflow-wrap: anywhere; color: inherit; text-decoration: none; }
        a.title:hover { text-decoration: underline; }
        textarea, select { font: inherit; padding: .4rem .5rem; max-width: 100%; }
        .check-label { display: flex; align-items: center; gap: .5rem; }
        details { margin-top: 1rem; }
        details form { margin: .5rem 0; }
        li.done .title { color: #8e8e93; text-decoration: line-through; }
        .dot { display: inline-block; flex: none; width: .9rem; height: .9rem; border-radius: 50%; }
        h1 .dot { margin-right: .5rem; vertical-align: middle; }
        main > form { margin: 0 0 1rem; }
        .count, .due { color: #8e8e93; }
        ul.smart { display: grid; grid-template-columns: repeat(auto-fit, minmax(9rem, 1fr)); }
        .check { width: 1.4rem; height: 1.4rem; border-radius: 50%; border: 2px solid #8e8e93; background: #fff; padding: 0; }
        .check[aria-pressed="true"] { background: #007aff; border-color: #007aff; }
        .stack { display: grid; gap: .5rem; max-width: 20rem; }
        input { font: inherit; padding: .4rem .5rem; min-width: 0; max-width: 100%; }
        button { font: inherit; padding: .35rem .75rem; }
        .delete { background: none; border: 1px solid #d1d1d6; border-radius: .4rem; }
        .problem { color: #b00020; }
        .handle { cursor: grab; touch-action: none; user-select: none; color: #8e8e93; flex: none; }
        li.dragging { opacity: .6; background: #e5f0ff; }
        .body { flex: 1; min-width: 0; display: flex; flex-direction: column; }
        .tags .tag, span.tag { color: #007aff; font-size: .85rem; margin-right: .4rem; }
        ul.tags { display: flex; flex-wrap: wrap; }
        ul.tags li { border-bottom: none; }
        .moves { display: flex; flex: none; gap: .15rem; }
        form.items { margin: 0 0 1rem; }
        .move { padding: .2rem .45rem; }
        h2 { font-size: 1.1rem; margin: 1rem 0 .5rem; }
        .pages { justify-content: center; margin-bottom: 1rem; }
        :focus-visible { outline: 3px solid #007aff; outline-offset: 2px; }
        """
}
