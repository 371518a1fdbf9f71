/* schedlab's SchedulerOutput panel: the renderer of the panel of that id (scheduler/output.py OUTPUT_PANEL), what a
 * vLLM learner looks for beside the stage, registered in the player's one registry of panels (player/panels.js):
 * the system's log line and counters, the free block queue head to tail (blocks still in the prefix cache starred,
 * this step's evictions), the step as vLLM's SchedulerOutput lists it and each request's counters. Everything is
 * what the server sent of the frame's panel (viz/scheduler_output_view.py), its words the panel's own
 * (panel.scheduler_output.* in i18n/); nothing is worked out here. */
(function () {
  'use strict';
  if (!window.SchedlabPlayer || window.SchedlabSchedulerOutputView) return;
  window.SchedlabSchedulerOutputView = true;
  const esc = s => String(s).replace(/[&<>"']/g, ch => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[ch]));

  function queueHtml(data, t) {
    if (!data.queue.length) return `<span class="sp-vq-empty">${esc(t('queue_empty'))}</span>`;
    const [free, cached] = data.colors;
    const cells = data.queue.map(entry => entry === null
      ? `<span class="sp-vq-more">⋯ ${esc(t('queue_more', {n: data.queue_len - data.queue.length + 1}))} ⋯</span>`
      : `<span class="sp-vq-cell${entry[1] ? ' sp-vq-cached' : ''}" style="background:${entry[1] ? cached : free}">${entry[0]}${entry[1] ? '★' : ''}</span>`);
    return `<span class="sp-vq-end">${esc(t('head'))}</span>${cells.join('<span class="sp-vq-link">→</span>')}<span class="sp-vq-end">${esc(t('tail'))}</span>`;
  }

  function countersHtml(data, t) {
    const head = ['col_request', null, null, null, 'col_step'].map((key, i) =>
      `<th>${esc(key ? t(key) : ['num_computed_tokens', 'num_tokens', 'num_cached_tokens'][i - 1])}</th>`).join('');
    const rows = data.requests.map(r => `<tr>${r.map((value, i) => `<td>${value === null ? '—' : esc(value)}</td>`).join('')}</tr>`);
    return `<table class="sp-vc"><thead><tr>${head}</tr></thead><tbody>${rows.join('')}</tbody></table>`;
  }

  const PANEL = 'scheduler_output';  // scheduler/output.py OUTPUT_PANEL
  const WORDS = `panel.${PANEL}.`;  // its words' ids (viz/scheduler_output_view.py WORDS)

  function draw(player, data, panel) {
    if (!panel.className) {  // a new panel's box
      panel.className = 'sp-so';
      panel.setAttribute('data-testid', 'scheduler-output');
    }
    const t = (key, params) => player.t(WORDS + key, params);
    const output = data.output.map(([name, value]) => `<div><b>${esc(name)}</b>=${esc(value)}</div>`).join('');
    const html = `<div class="sp-vtop">
<div class="sp-vtitle">${esc(t('log_title'))}</div>
<div class="sp-vlog" data-testid="scheduler-output-log">${[data.log, data.counters].filter(Boolean).map(line => `<code>${esc(line)}</code>`).join('<br>')}</div>
${data.preempted_text ? `<div class="sp-vnote">${esc(data.preempted_text)}</div>` : ''}
<div class="sp-vgrid">
  <div>
    <div class="sp-vtitle">${esc(t('queue_title'))}</div>
    <div class="sp-vq" data-testid="scheduler-output-free-queue">${queueHtml(data, t)}</div>
    <div class="sp-vnote">${esc(t('queue_key'))}</div>
    ${data.evicted_text ? `<div class="sp-vq-evicted">${esc(data.evicted_text)}</div>` : ''}
  </div>
  <div>
    <div class="sp-vtitle">${esc(t('output_title'))}</div>
    <div class="sp-vout" data-testid="scheduler-output-output">${output}</div>
    <div class="sp-vnote">${esc(t('output_note'))}</div>
  </div>
</div>
</div>
<div class="sp-vcounters">
<div class="sp-vtitle">${esc(t('counters_title'))}</div>
<div class="sp-vcbox">${countersHtml(data, t)}</div>
<div class="sp-vnote">${esc(t('counters_note'))}</div>
</div>`;
    if (panel.spHtml !== html) {
      panel.innerHTML = html;
      panel.spHtml = html;
    }
  }

  window.SchedlabPlayer.registerPanel(PANEL, draw);
})();
