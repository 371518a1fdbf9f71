/* schedlab's generic panel shapes: the renderer of every panel of shape "card" (scheduler/panel_shapes.py Card), any
 * kind's (V0's phase and SchedulingBudget), registered by shape in the player's one registry (player/panels.js), so a
 * kind ships such a panel with no file of its own here. A card: its title, its lines of facts, and its meters, each a
 * labelled bar `used` of `limit` with marks. Every word and number is what the server sent (viz/panels.py, the words
 * in the reader's language, the numbers the scheduler recorded); the bars' widths only draw them. Marks on a pool are
 * drawn by the pool (player/pool.js). */
(function () {
  'use strict';
  if (!window.SchedlabPlayer || window.SchedlabPanelShapes) return;
  const esc = s => String(s).replace(/[&<>"']/g, ch => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[ch]));

  function meterHtml([label, used, limit, marks]) {
    return `<div class="sp-meter"><div class="sp-meter-label">${esc(label)}</div>${window.SchedlabPlayer.barHtml(used, limit, marks)}</div>`;
  }

  function drawCard(player, data, panel) {
    window.SchedlabPlayer.placeBeside(panel, true);
    if (!panel.className) {  // a new panel's box
      panel.className = 'sp-card';
      panel.setAttribute('data-testid', 'panel-card');
    }
    const html = `<div class="sp-card-title">${esc(data.title)}</div>
${data.lines.map(line => `<div class="sp-card-line">${esc(line)}</div>`).join('')}
<div class="sp-meters">${data.meters.map(meterHtml).join('')}</div>`;
    if (panel.spHtml !== html) {
      panel.innerHTML = html;
      panel.spHtml = html;
    }
  }

  window.SchedlabPlayer.registerShape('card', drawCard);
  window.SchedlabPanelShapes = true;
})();
