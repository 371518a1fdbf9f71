/* schedlab's stage player, 4 of 7: the one registry of a scheduler's own panels: each panel id a scheduler kind declares
 * (scheduler/contract.py PanelKind: vLLM's SchedulerOutput, SGLang's radix tree) mapped to the one renderer that
 * draws it, and each generic panel shape (scheduler/panel_shapes.py: a card of facts and meters) to the renderer that
 * draws a panel of that shape for any kind (V0's phase and budget card), so a kind ships a panel by declaring it. A
 * renderer's file registers it after the player's (SchedlabPlayer.registerPanel(id, draw) or registerShape(shape,
 * draw), player.js's header): scheduler_output_view.js's and tree_view.js's by id, panel_shapes.js's by shape. Every
 * player draws a frame's panels here, below its stage, in the order the frame lists them (the view's `panels`: [panel
 * id, what its renderer draws], viz/panels.py; a shaped panel's data says its `shape`), whoever mounted it: the app's
 * stage, the offline player, a handout's pages and slides, the lockstep stages. A panel the frame does not list is
 * hidden; one no renderer is registered for is not drawn (marks on a pool: the pool draws them, player/pool.js).
 */
(function () {
  'use strict';
  if (window.SchedlabPlayer) return;
  const parts = window.SchedlabPlayerParts;
  const RENDERERS = new Map();  // panel id -> draw(player, data, element), for every player of the page
  const SHAPES = new Map();  // generic shape -> draw(player, data, element), for a panel of that shape of any kind

  /* `draw(player, data, element)` draws the panel `id` of each frame shown: `data` what the server sent of it,
   * `element` the panel's own box below the stage (kept from frame to frame); its words: player.t. */
  function registerPanel(id, draw) { RENDERERS.set(id, draw); }

  /* `draw` draws every panel whose data says it is of `shape`, whichever kind declared it (the same arguments). */
  function registerShape(shape, draw) { SHAPES.set(shape, draw); }

  /* The frame's panels in `box` (the stage's `.sp-panels`), each in a box of its own, made there and kept by id (a
   * renderer may move its box elsewhere on the stage: the radix tree beside the narration). */
  function drawPanels(player, view, box) {
    const elements = box.panelElements || (box.panelElements = new Map());
    const shown = new Set();
    for (const [id, data] of view.panels) {
      const draw = RENDERERS.get(id) || (data && SHAPES.get(data.shape));
      if (!draw) continue;
      let element = elements.get(id);
      if (!element) {
        element = document.createElement('div');
        element.dataset.panel = id;
        box.appendChild(element);
        elements.set(id, element);
      }
      if (element.hidden) element.hidden = false;
      draw(player, data, element);
      shown.add(element);
    }
    for (const element of elements.values()) if (!shown.has(element) && !element.hidden) element.hidden = true;
  }

  /* Where a panel that reads with the narration goes: under the queues, beside the narration, where the stage has the
   * queues beside it (at 1280x720 it then starts in view, not a screen below); below the stage in a narrow one (a
   * lockstep column), where the narration comes first. Its box is moved there (SGLang's radix tree, a card);
   * `aboveLegend`: beside the narration, between the queues and their legend (a short card then starts in view). */
  function placeBeside(panel, aboveLegend = false) {
    const stage = panel.closest('.sp'), main = stage && stage.querySelector('.sp-main');
    const beside = main && getComputedStyle(main).gridTemplateColumns.trim().split(/\s+/).length > 1;
    const host = stage && stage.querySelector(beside ? '.sp-queues' : '.sp-panels');
    if (!host || panel.parentElement === host) return;
    host.insertBefore(panel, (beside && aboveLegend && host.querySelector(':scope > .sp-legend')) || null);
  }

  const share = (n, of) => `${(100 * Math.min(Math.max(n, 0), of) / Math.max(of, 1)).toFixed(2)}%`;  // of a bar, capped

  /* A bar `used` of `limit` with its marks ([at, label] each, as the server said them: a line at `at`, its label
   * under the bar): a card's meter (panel_shapes.js) and a pool's marks (pool.js). The widths only draw the numbers. */
  function barHtml(used, limit, marks) {
    const esc = parts.esc;  // render.js's, which runs after this file
    const lines = marks.map(([at, said]) => `<i class="sp-bar-mark" data-at="${at}" style="left:${share(at, limit)}" title="${esc(said)}"></i>`).join('');
    const notes = marks.map(([, said]) => `<div class="sp-bar-note"><i class="sp-bar-key"></i>${esc(said)}</div>`).join('');
    return `<div class="sp-bar" data-used="${used}" data-limit="${limit}"><i class="sp-bar-fill" style="width:${share(used, limit)}"></i>${lines}</div>${notes}`;
  }

  Object.assign(parts, {registerPanel, registerShape, drawPanels, barHtml, placeBeside});
})();
