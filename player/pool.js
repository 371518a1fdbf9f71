/* schedlab's stage player, 6 of 7: the KV pool, a canvas of one cell per block (or token slot, or page: each in its
 * pool's words; coloured by its owner, faded between frames, repainted only where a block changed), its hover tips,
 * the pools a scheduler declares beside it (V0's CPU pool: a cell per unit, coloured by the request holding it), the
 * blocks a step copied between pools (each flying from its source unit to its destination), and the block tables.
 */
(function () {
  'use strict';
  if (window.SchedlabPlayer) return;
  const parts = window.SchedlabPlayerParts, {WIRE, F, B, M, COLORS, color, esc, setHtml, condense, joinHeld, markHtml, barHtml} = parts;
  const MOVE_MIN_MS = 450;  // a block's flight between pools lasts at least this: long enough to be followed
  const poolWords = v => (v.cfg.unit === 'block' ? 'blocks' : 'tree');  // a block pool's words, or a radix tree's

  class Pool {
    fitPool(maxHeight) {
      const canvas = this.$('.sp-grid'), box = this.$('.sp-canvas-box');
      const height = canvas.getBoundingClientRect().height;
      if (height <= maxHeight) return;
      box.style.width = Math.max(120, Math.floor(box.clientWidth * maxHeight / height)) + 'px';
      this.sized = null;  // the box's new width, measured now (the ResizeObserver would only later)
      this.paintPool(this.views[this.shown], this.colors);
    }

    owners(v) {
      const owners = v.blocks.map(() => []);
      v.requests.forEach((r, rid) => r[F.block_table].forEach(b => { if (owners[b]) owners[b].push(rid); }));
      return owners;
    }

    gridShape(n) {
      const columns = Math.max(1, Math.min(n, Math.max(this.sizes().grid, Math.ceil(Math.sqrt(n)))));
      return [Math.ceil(n / columns), columns];
    }

    /* A pool of a row or two (a preemption lesson's few blocks) sits above the narration, beside the queues, so a
     * projector shows it with them; a larger one has the width below. */
    placePool(n) {
      const pool = this.$('.sp-pool'), home = this.$(this.gridShape(n)[0] <= 2 ? '.sp-story' : '.sp-lower');
      if (pool.parentElement !== home) {
        home.prepend(pool);
        this.sized = null;
      }
      this.root.classList.toggle('sp-pool-beside', home.classList.contains('sp-story'));
    }

    /* The legend under the pool in `words` ('blocks', or 'tree': a radix tree's evictable and empty units). */
    poolLegend(words) {
      if (words === this.poolLegendShown) return;
      this.poolLegendShown = words;
      const legend = this.strings.legend || {};
      this.$('.sp-plegend').innerHTML = ((words === 'tree' ? legend.pool_tree : legend.pool) || []).map(([mark, said]) =>
        `<span${mark === 'sw:overfull' ? ' class="sp-overfull-key" hidden' : ''}>${markHtml(mark)}${esc(said)}</span>`).join('');
      this.$('.sp-legend .sp-hint').textContent = (words === 'tree' ? legend.hint_tree : legend.hint) || '';
      this.paintSwatches();
    }

    /* The pool's title and what it holds; its canvas is painted after every write (fadePool). */
    renderPool(v) {
      this.placePool(v.blocks.length);
      this.poolLegend(poolWords(v));
      const owners = this.owners(v);
      this.poolOwners = owners;
      this.poolColors = v.blocks.map((b, id) => b[B.ref_count] === 0 ? (b[B.hash] !== null ? COLORS.cached_free : COLORS.free)
        : owners[id].length ? color(owners[id][0]) : COLORS.reserved);  // in use by no request: vLLM's null block
      const m = v.metrics, reserved = this.poolColors.filter(c => c === COLORS.reserved).length;
      const unit = this.t(`unit_id.${v.cfg.unit}`, {id: this.poolColors.indexOf(COLORS.reserved)});  // SGLang: slot 0, or page 0
      const n = v.blocks.length - reserved;  // vLLM's null block is not one of the pool's blocks
      const tokens = this.t(v.cfg.block_size === 1 ? 'n.token.one' : 'n.token.other', {n: v.cfg.block_size});
      setHtml(this.$('.sp-ptitle'), this.t(`pool_title.${poolWords(v)}`, {size: this.t(`pool_size.${v.cfg.unit}`, {n, tokens}),
        used: n - m[M.num_free_blocks], cached: m[M.num_cached_free_blocks], units: this.t(`pool_units.${v.cfg.unit}`),
        empty: m[M.num_free_blocks] - m[M.num_cached_free_blocks], reserved: reserved && v.cfg.words.reserved_pool ? this.t(v.cfg.words.reserved_pool, {unit}) : ''}));
      Object.assign(this.drawn, {owners, refs: v.blocks.map(b => b[B.ref_count]),
        cached_free: v.blocks.flatMap((b, i) => b[B.ref_count] === 0 && b[B.hash] !== null ? [i] : []),
        copied_in: v.moves.filter(([, , pool]) => pool === WIRE.main_pool).map(([, , , unit]) => unit)});
      this.renderMarks(this.$('.sp-pmarks'), this.poolMarks(v, WIRE.main_pool), n - m[M.num_free_blocks], n);
      const overfullKey = this.$('.sp-overfull-key');  // a block pool's only: the notebook's bug
      if (overfullKey) overfullKey.hidden = !(v.overfull || []).length;
      this.renderSidePools(v);
    }

    /* The marks the scheduler puts on pool `pool` this frame ([at, label] each: its panels of shape "pool_marks",
     * viz/panels.py: V0's watermark on the GPU pool). */
    poolMarks(v, pool) {
      return v.panels.flatMap(([, data]) => (data && data.shape === 'pool_marks' && data.pool === pool ? data.marks : []));
    }

    /* A pool's marks in `box`: a gauge of its units in use (`used` of `n`, the pool title's numbers) with a line at
     * each mark, its label under it; hidden where the pool has none. */
    renderMarks(box, marks, used, n) {
      if (box.hidden !== !marks.length) box.hidden = !marks.length;
      if (marks.length) setHtml(box, barHtml(used, n, marks));
    }

    /* The pools the scheduler declares beside the main one, a cell per unit in the colour of the request holding it;
     * a unit a block was copied into this step is ringed. */
    renderSidePools(v) {
      const box = this.$('.sp-side'), names = v.cfg.side_pools || [];
      if (box.hidden !== !names.length) box.hidden = !names.length;
      const copiedTo = new Set(v.moves.map(([, , pool, unit]) => `${pool}:${unit}`));
      setHtml(box, names.map(name => {
        const units = v.side[name] || [], used = units.filter(holder => holder !== null).length;
        const cells = units.map((holder, unit) => `<span class="sp-scell${holder === null ? ' sp-sfree' : ''}${copiedTo.has(`${name}:${unit}`) ? ' sp-copied' : ''}" ` +
          `data-unit="${unit}" style="background:${holder === null ? COLORS.free : color(holder)}" ` +
          `title="${esc(this.t(`${holder === null ? 'side_unit_free' : 'side_unit_held'}.${name}`, {unit, id: holder}))}">${unit}</span>`).join('');
        const marks = this.poolMarks(v, name);
        return `<div class="sp-spool" data-pool="${esc(name)}"><div class="sp-sptitle">${esc(this.t(`side_pool.${name}`, {n: units.length, used}))}</div>` +
          `<div class="sp-scells">${cells}</div>${marks.length ? `<div class="sp-pmarks">${barHtml(used, units.length, marks)}</div>` : ''}</div>`;
      }).join(''));
    }

    /* Where unit `unit` of pool `pool` is drawn on the page: a cell of the main pool's canvas, or a side pool's. */
    unitRect(v, pool, unit) {
      if (pool !== WIRE.main_pool) {
        const cell = this.$(`.sp-spool[data-pool="${pool}"] [data-unit="${unit}"]`);
        return cell && cell.getBoundingClientRect();
      }
      if (!this.cell || unit >= v.blocks.length) return null;
      const box = this.$('.sp-grid').getBoundingClientRect(), columns = this.gridShape(v.blocks.length)[1];
      return {left: box.left + (unit % columns) * this.cell, top: box.top + Math.floor(unit / columns) * this.cell,
        width: this.cell, height: this.cell};
    }

    /* The blocks this step copied between pools (`moves`: V0's swaps), each a cell flying from its source unit to its
     * destination, in the colour the destination has now. */
    animateMoves(v, slideMs) {
      if (!v.moves.length || !slideMs) return;
      const host = this.root.getBoundingClientRect(), layer = this.$('.sp-moves');
      for (const [fromPool, fromUnit, toPool, toUnit] of v.moves) {
        const from = this.unitRect(v, fromPool, fromUnit), to = this.unitRect(v, toPool, toUnit);
        if (!from || !to) continue;
        const ghost = document.createElement('i');
        ghost.className = 'sp-move';
        Object.assign(ghost.dataset, {from: `${fromPool}:${fromUnit}`, to: `${toPool}:${toUnit}`});
        const colour = toPool === WIRE.main_pool ? this.poolColors[toUnit]
          : this.$(`.sp-spool[data-pool="${toPool}"] [data-unit="${toUnit}"]`).style.background;
        Object.assign(ghost.style, {left: `${to.left - host.left}px`, top: `${to.top - host.top}px`, width: `${to.width}px`,
          height: `${to.height}px`, background: colour});
        layer.appendChild(ghost);
        const flight = ghost.animate([{transform: `translate(${from.left - to.left}px, ${from.top - to.top}px)`}, {transform: 'none'}],
          {duration: Math.max(MOVE_MIN_MS, slideMs), easing: 'ease-in-out'});
        flight.onfinish = () => ghost.remove();
      }
    }

    /* The pool's canvas to the frame's colours, fading from the ones drawn over `fadeMs` (0: at once). */
    fadePool(v, fadeMs) {
      const target = this.poolColors, from = this.colors.length === target.length ? this.colors : target;
      cancelAnimationFrame(this.poolFrame);
      if (!fadeMs || from === target) { this.paintPool(v, target); return; }
      const start = performance.now();
      const step = now => {
        const t = Math.min(1, (now - start) / fadeMs);
        this.paintPool(v, from.map((c, i) => c === target[i] ? c : mix(c, target[i], t)));
        if (t < 1) this.poolFrame = requestAnimationFrame(step);
      };
      this.colors = from;
      this.poolFrame = requestAnimationFrame(step);
    }

    /* The blocks in `colors`: only those whose colour, reference count, overfull or copied-in mark changed since the
     * canvas was last painted at this shape (a step changes a few blocks of hundreds). */
    paintPool(v, colors) {
      this.colors = colors;
      const canvas = this.$('.sp-grid'), n = v.blocks.length;
      const [rows, columns] = this.gridShape(n);
      const width = Math.max(120, this.measured().canvas || 480);
      const cell = Math.max(4, Math.min(this.root.classList.contains('sp-present') ? 44 : 34, Math.floor(width / columns)));
      const ratio = window.devicePixelRatio || 1;
      if (canvas.width !== columns * cell * ratio || canvas.height !== rows * cell * ratio) {
        canvas.width = columns * cell * ratio;
        canvas.height = rows * cell * ratio;
        canvas.style.width = columns * cell + 'px';
        canvas.style.height = rows * cell + 'px';
        this.$('.sp-pmarks').style.width = canvas.style.width;  // the gauge of its marks as wide as its cells
      }
      this.cell = cell;
      const ctx = canvas.getContext('2d');
      ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
      const shape = `${n} ${columns} ${cell} ${ratio}`;
      if (this.painted.shape !== shape) {  // (a canvas given a new size forgets its font too)
        this.painted = {shape, cells: []};
        ctx.clearRect(0, 0, columns * cell, rows * cell);
        ctx.font = `${Math.floor(cell * 0.36)}px sans-serif`;  // setting it lays the page out: once per shape
        ctx.textAlign = 'center';
        ctx.textBaseline = 'middle';
      }
      const gap = cell >= 12 ? 2 : 1;
      const labels = cell >= 24;
      const overfull = new Set((v.overfull || []).map(([id]) => id)), copiedIn = new Set(this.drawn && this.drawn.copied_in);
      for (let id = 0; id < n; id++) {
        const ref = v.blocks[id][B.ref_count], painted = `${colors[id]} ${ref} ${overfull.has(id)} ${copiedIn.has(id)}`;
        if (this.painted.cells[id] === painted) continue;
        this.painted.cells[id] = painted;
        const x = (id % columns) * cell, y = Math.floor(id / columns) * cell;
        ctx.clearRect(x, y, cell, cell);
        ctx.fillStyle = colors[id];
        ctx.fillRect(x + gap / 2, y + gap / 2, cell - gap, cell - gap);
        if (overfull.has(id)) {  // more tokens than a block holds: the notebook's block-size bug
          ctx.strokeStyle = '#D62728';
          ctx.lineWidth = Math.max(2, cell / 10);
          ctx.strokeRect(x + gap / 2 + 1, y + gap / 2 + 1, cell - gap - 2, cell - gap - 2);
        } else if (copiedIn.has(id)) {  // a block copied in this step from another pool (a swap-in), ringed
          ctx.strokeStyle = '#1F2933';
          ctx.lineWidth = Math.max(1, cell / 14);
          ctx.strokeRect(x + gap / 2 + 1, y + gap / 2 + 1, cell - gap - 2, cell - gap - 2);
        }
        if (labels) {  // within its cell (the next one's may not be painted again)
          ctx.fillStyle = ref > 0 ? '#FFFFFF' : '#7B8794';
          ctx.fillText(ref > 1 ? `${id}×${ref}` : String(id), x + cell / 2, y + cell / 2, cell - gap);
        }
      }
    }

    blockTip(v, id) {
      const b = v.blocks[id], owners = this.poolOwners[id] || [];
      const pool = poolWords(v);
      const ref = b[B.ref_count];
      const state = this.t(ref === 0 ? (b[B.hash] !== null ? `block_cached_free.${pool}` : `block_free.${pool}`) : !owners.length ? v.cfg.words.reserved_unit || 'block_in_use'
        : ref > 1 ? 'block_shared' : 'block_in_use');
      let [rid, start, count] = b[B.source] || [null, 0, 0];  // a cached-free block: the request that filled it
      if (owners.length) {
        const size = v.cfg.block_size;
        rid = owners[0];
        start = v.requests[rid][F.block_table].indexOf(id) * size;
        const held = Math.min(v.requests[rid][F.num_tokens], v.requests[rid][F.num_computed_tokens]);  // K/V in it
        count = Math.max(0, Math.min(size, held - start));
      }
      const pieces = rid === null ? null : v.pieces[rid];
      const text = rid === null ? this.t('no_tokens') : pieces ? JSON.stringify(joinHeld(pieces.slice(start, start + count), ''))
        : joinHeld(v.tokens[rid].slice(start, start + count), ' ');
      const overfull = new Map(v.overfull || []).get(id);  // tokens held: the notebook's bug, a prefill in one block
      const lines = [`<b>${esc(this.t(`unit_id.${v.cfg.unit}`, {id}))}</b> · ${esc(state)}`,
        esc(this.t('owners', {owners: owners.length ? owners.map(o => this.t('owner', {id: o})).join(', ') : this.t('none')})),
        esc(this.t(`ref_count.${pool}`, {n: ref})), esc(this.t(`hash.${pool}`, {hash: b[B.hash] ? '0x' + b[B.hash] + '…' : this.t(`no_hash.${pool}`)})),
        esc(this.t('block_tokens', {tokens: text.slice(0, 80)}))];
      if (overfull) lines.push(this.t('overfull', {n: overfull, size: v.cfg.block_size}));
      return lines.join('<br>');
    }

    renderTables(v) {
      this.$('.sp-ttitle').textContent = this.t(`tables_title.${v.cfg.unit}`);
      const {font, tables} = this.measured();  // a cell is 2.6em of 0.85em text wide
      const width = Math.max(5, Math.floor((tables - 7.9 * font) / (2.6 * 0.85 * font + 2)));
      const limit = 2 * this.sizes().rows;
      const rows = [];
      let holders = 0;
      v.requests.forEach((r, rid) => {
        const table = r[F.block_table];
        if (!table.length || ++holders > limit) return;
        const cells = condense(table.length, width, 0, 0).map(i => i === null ? `<span class="sp-tok sp-gap" title="${esc(this.t('blocks_elided'))}">⋯</span>` :
          `<span class="sp-tok sp-bt" style="background:${color(rid)}" title="${esc(this.t(`table_cell.${v.cfg.unit}`, {i, p: table[i], n: v.blocks[table[i]][B.ref_count]}))}">${table[i]}${v.blocks[table[i]][B.ref_count] > 1 ? '×' + v.blocks[table[i]][B.ref_count] : ''}</span>`);
        rows.push(`<div class="sp-trow"><span class="sp-label" style="color:${color(rid)}">ID:${rid}</span><span class="sp-cells">${cells.join('')}</span></div>`);
      });
      if (holders > limit) rows.push(`<div class="sp-more">${esc(this.t('more_holders', {n: holders - limit}))}</div>`);
      setHtml(this.$('.sp-trows'), rows.join('') || `<div class="sp-empty">${esc(this.t('no_holders'))}</div>`);
    }
  }

  function mix(a, b, t) {
    const x = [1, 3, 5].map(i => parseInt(a.slice(i, i + 2), 16)), y = [1, 3, 5].map(i => parseInt(b.slice(i, i + 2), 16));
    return '#' + x.map((v, i) => Math.round(v + (y[i] - v) * t).toString(16).padStart(2, '0')).join('');
  }

  parts.Pool = Pool;
})();
