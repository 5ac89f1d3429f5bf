// Search: a regular expression over event names. Enter runs it (or steps to the next match),
// Shift+Enter steps back; the count is shown beside the box, every match is marked on the
// timeline, and the current one is selected and scrolled into view.
import {renderSearch} from './panels.js';

const PAGE = 200;

export class Search {
  // app: {api, trace(), timeline(), jump(ref, opts), laneTitle(id), offset(), status(text),
  //       showTab(tab), changed()}
  constructor(app) {
    this.app = app;
    this.q = '';
    this.total = 0;
    this.index = -1;
    this.page = null;  // {offset, events}
    this.count = document.getElementById('search-count');
    this.results = document.getElementById('search-results');
  }

  reset() {
    this.q = '';
    this.total = 0;
    this.index = -1;
    this.page = null;
    this.count.textContent = '';
  }

  // Enter in the search box.
  async enter(q, back) {
    if (q && q === this.q && this.total > 0) return this.step(back ? -1 : 1);
    return this.run(q, {index: back ? -1 : 0});
  }

  // A new search; index < 0 counts from the end. Returns false for an invalid expression.
  // jump: select the current match and bring it into view.
  async run(q, {index = 0, show = true, jump = true} = {}) {
    this.reset();
    this.q = q;
    const tl = this.app.timeline();
    if (!q) {
      tl.setHighlight(null);
      this.results.textContent = 'Type a regular expression in the search box and press Enter.';
      this.app.changed();
      return true;
    }
    try {
      new RegExp(q, 'i');
    } catch (e) {
      this.count.textContent = 'bad expression';
      this.app.status(`bad regular expression: ${e.message}`);
      this.q = '';
      return false;
    }
    tl.setHighlight({q});
    let r;
    try {
      r = await this.app.api.search(this.app.trace(), {q, limit: PAGE});
    } catch (e) {
      this.count.textContent = 'error';
      this.app.status(e.message);
      return false;
    }
    if (this.q !== q) return true;
    this.total = r.total;
    this.page = {offset: 0, events: r.events};
    if (show) this.app.showTab('search');
    if (this.total === 0) {
      this.count.textContent = 'no match';
      renderSearch(this.results, q, r, -1, this.ctx());
      this.app.changed();
      return true;
    }
    await this.goto(((index % this.total) + this.total) % this.total, {jump});
    return true;
  }

  async step(delta) {
    if (this.total === 0) return;
    await this.goto((this.index + delta + this.total) % this.total);
  }

  async goto(index, {jump = true} = {}) {
    const offset = Math.floor(index / PAGE) * PAGE;
    if (!this.page || this.page.offset !== offset) {
      const r = await this.app.api.search(this.app.trace(), {q: this.q, offset, limit: PAGE});
      this.page = {offset, events: r.events};
    }
    this.index = index;
    const ref = this.page.events[index - offset];
    this.count.textContent = `${(index + 1).toLocaleString()} / ${this.total.toLocaleString()}`;
    renderSearch(this.results, this.q, {total: this.total, offset, events: this.page.events}, index, this.ctx());
    if (ref && jump) this.app.jump(ref, {keepTab: true});
    this.app.changed();
  }

  ctx() {
    return {
      onJump: (ref, n) => (n === undefined ? this.app.jump(ref) : this.goto(n)),
      offset: this.app.offset(),
      laneTitle: (id) => this.app.laneTitle(id),
    };
  }
}
