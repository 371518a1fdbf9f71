/* schedlab's stage player, 2 of 7: transport and clock. What comes from the server (messages of deltas, decoded
 * once and kept: Step, Back, the slider and Play need no server), what is asked of it at the end of what is held
 * (a target step), and moving among the frames held: Step, Back, a key frame, Play on the beat of its speed.
 */
(function () {
  'use strict';
  if (window.SchedlabPlayer) return;
  const parts = window.SchedlabPlayerParts, {K, EMPTY, decode} = parts;

  const SPEEDS = [1, 2, 5, 10, 20];
  const ANSWER_TIMEOUT_MS = 30000;  // a real-model step on a busy CPU can take seconds

  class Transport {
    /* -- receiving ----------------------------------------------------------------------------------- */

    receive(message) {
      try {
        this.apply(message);
      } catch (e) {
        this.failures += 1;
        this.setMessage(this.t('unreadable', {error: e.message, then: this.t(this.failures < 3 ? 'unreadable_retry' : 'unreadable_final')}));
        this.pending = null;
        if (this.failures < 3) this.ask(this.desired);
        return;
      }
      this.advance();
    }

    apply(m) {
      if (!m || typeof m !== 'object' || !Array.isArray(m.frames)) throw new Error('the message holds no frames');
      this.header = {title: m.title || '', titles: m.titles || [], model: m.model || '', key_frames: m.key_frames || [],
        placeholder: m.placeholder, end_note: m.end_note, bound_note: m.bound_note || ''};
      if (m.strings && m.lang !== this.lang) this.useStrings(m.lang, m.strings);
      this.leads = Boolean(m.leads);
      this.bound = Number.isInteger(m.bound) ? m.bound : null;
      if (m.colors) this.useColors(m.colors);
      if (m.run !== this.run) {
        // Step clicks not yet answered when the page switched runs (a settings change) carry over to the new run
        this.stepsCarried = this.shown >= 0 ? Math.max(0, this.desired - this.shown) : 0;
        this.run = m.run;
        this.views = [];
        this.prev = EMPTY;
        this.shown = -1;
        this.desired = 0;
        this.over = false;
        this.rows.forEach(row => row.remove());
        this.rows.clear();
        this.tallest = 0;
      }
      if (this.pending && m.answered >= this.pending.seq) this.pending = null;
      if (m.from > this.views.length) {
        this.ask(Math.max(this.desired, this.views.length));  // frames were missed: ask again from what is here
      } else {
        for (let k = this.views.length - m.from; k < m.frames.length; k++) {
          const view = decode(this.prev, m.frames[k]);
          if (view.step !== this.views.length) throw new Error(`frame ${view.step} came where ${this.views.length} belongs`);
          this.views.push(view);
          this.prev = view;
          this.tallest = Math.max(this.tallest, view.running.length + view.done.length + view.waiting.length);
        }
      }
      this.failures = 0;
      this.over = Boolean(m.over) && m.last === this.views.length - 1;
      if (m.error) {
        this.setMessage(m.error);
        this.desired = Math.min(this.desired, this.views.length - 1);
        this.pause();
      }
      this.followCursor(m);
      this.renderKeys();
    }

    /* Show what `desired` asks for, as far as it is held; ask for the rest. */
    advance() {
      const last = this.views.length - 1;
      if (last < 0) return;
      if (this.shown < 0) this.show(Math.min(this.desired, last));
      else if (this.desired > this.shown && !this.playing) this.show(Math.min(this.desired, last));
      if (this.desired > last) {
        if (this.over) {
          this.desired = last;
          this.setMessage(this.header.end_note || this.t('run_ends'));
          this.pause();
        } else {
          this.ask(this.desired + (this.playing ? this.lookahead() : 0));
        }
      }
      this.updateControls();
    }

    lookahead() { return Math.max(10, 3 * this.speed()); }

    ask(want) {
      if (this.bound !== null && want > this.bound) {  // a class's question is open: the lecturer's frame is the end
        if (this.desired > this.bound) {
          this.desired = Math.min(this.bound, this.views.length - 1);
          this.setMessage(this.header.bound_note);
          this.pause();
        }
        if (this.views.length - 1 >= this.bound) return;
        want = this.bound;
      }
      if (!this.send || this.pending || this.run === null) {
        if (!this.send && want > this.views.length - 1) this.desired = this.views.length - 1;
        return;
      }
      this.seq += 1;
      this.pending = {seq: this.seq, want, at: Date.now()};
      this.send({run: this.run, have: this.views.length - 1, want, seq: this.seq});
      clearTimeout(this.answerTimer);
      this.answerTimer = setTimeout(() => this.checkAnswer(), this.answerTimeoutMs + 100);
      this.updateControls();
    }

    /* -- moving --------------------------------------------------------------------------------------- */

    step() {
      this.setMessage('');
      this.desired = Math.max(this.desired, this.shown) + 1;
      if (this.desired <= this.views.length - 1) this.show(this.desired);
      this.advance();
    }

    back() {
      this.setMessage('');
      this.pause();
      this.desired = Math.max(0, this.shown - 1);
      this.show(this.desired);
    }

    goto(k) {
      this.setMessage('');
      this.desired = k;
      if (k <= this.views.length - 1) this.show(k);
      this.advance();
    }

    play() {
      if (this.playing) return;
      this.playing = true;
      this.due = 0;
      if (this.over && this.shown === this.views.length - 1) this.show(0);
      this.setMessage('');
      this.tellClass(this.speed());
      this.tick();
    }

    pause() {
      if (!this.playing) return;
      this.playing = false;
      clearTimeout(this.timer);
      this.desired = this.shown;
      this.updateControls();
      if (this.tellClass(0)) this.reported = this.shown;
      else this.reportSoon();
    }

    speed() { return Number(this.$('.sp-speed').value); }

    tick() {
      if (!this.playing || !this.root.isConnected) return;
      const last = this.views.length - 1;
      if (this.shown < last) {
        this.show(this.shown + 1);
        this.desired = this.shown;
        if (this.$('.sp-pause-key').checked && this.keySteps().has(this.shown)) this.pause();
      } else if (this.over) {
        this.setMessage(this.header.end_note || this.t('run_ends'));
        this.pause();
      } else if (this.bound !== null && this.shown >= this.bound) {
        this.setMessage(this.header.bound_note);
        this.pause();
      }
      if (this.playing && !this.over && last - this.shown < this.lookahead()) this.ask(last + this.lookahead());
      const now = performance.now(), interval = 1000 / this.speed();
      this.due = Math.max(now, (this.due || now) + interval);  // on the beat, however long drawing took
      this.timer = setTimeout(() => this.tick(), this.due - now);
    }

    /* Moved into a new element by a page rerun: a Play that stopped while it was off the page goes on. */
    reattached() {
      if (this.playing) {
        clearTimeout(this.timer);
        this.tick();
      }
    }

    checkAnswer() {
      if (this.pending && Date.now() - this.pending.at > this.answerTimeoutMs) {
        this.pending = null;
        this.pause();
        this.setMessage(this.t('no_answer', {s: Math.round(this.answerTimeoutMs / 1000)}));
      }
    }

    keySteps() { return new Set(this.header.key_frames.map(k => k[K.step])); }

    reportSoon() {
      if (!this.report) return;
      clearTimeout(this.reportTimer);
      this.reportTimer = setTimeout(() => {
        if (this.root.isConnected && !this.playing && this.shown !== this.reported && this.shown >= 0) {
          this.reported = this.shown;
          if (!this.tellClass(0)) this.report(this.shown);
        }
      }, 300);
    }
  }

  Object.assign(parts, {Transport, SPEEDS, ANSWER_TIMEOUT_MS});
})();
