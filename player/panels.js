/* schedlab's stage player, 4 of 7: the one registry of a scheduler's own panels: each panel id a scheduler kind declares
 * (scheduler/contract.py PanelKind: vLLM's SchedulerOutput, SGLang's radix tree) mapped to the one renderer that
 * draws it. A renderer's file registers it after the player's (SchedlabPlayer.registerPanel(id, draw), player.js's
 * header): scheduler_output_view.js's and tree_view.js's. Every player draws a frame's panels here, below its stage, in the
 * order the frame lists them (the view's `panels`: [panel id, what its renderer draws], viz/panels.py), whoever
 * mounted it: the app's stage, the offline player, a handout's pages and slides, the lockstep stages. A panel the
 * frame does not list is hidden; one no renderer is registered for is not drawn.
 */
(function () {
  'use strict';
  if (window.SchedlabPlayer) return;
  const parts = window.SchedlabPlayerParts;
  const RENDERERS = new Map();  // panel id -> draw(player, data, element), for every player of the page

  /* `draw(player, data, element)` draws the panel `id` of each frame shown: `data` what the server sent of it,
   * `element` the panel's own box below the stage (kept from frame to frame); its words: player.t. */
  function registerPanel(id, draw) { RENDERERS.set(id, draw); }

  /* The frame's panels in `box` (the stage's `.sp-panels`), each in a box of its own, made there and kept by id (a
   * renderer may move its box elsewhere on the stage: the radix tree beside the narration). */
  function drawPanels(player, view, box) {
    const elements = box.panelElements || (box.panelElements = new Map());
    const shown = new Set();
    for (const [id, data] of view.panels) {
      const draw = RENDERERS.get(id);
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

  Object.assign(parts, {registerPanel, drawPanels});
})();
