// Search over event names: the text is found anywhere in a name as typed or pasted (no character
// is special; case-insensitive), or as a regular expression with the ".*" toggle; a kind filter
// narrows it to ops, runtime calls, kernels or memory copies. Enter runs it (or steps to the next
// match), Shift+Enter steps back; matches are listed by start or by duration (longest first: the
// slowest instance of a kernel is one click), the count is shown beside the box, every match is
// marked on the timeline, and the current one is selected and scrolled into view.
import {renderSearch} from './panels.js';

const PAGE = 200;
export const SEARCH_KINDS = ['all', 'ops', 'runtime', 'kernels', 'memory'];

export class Search {
  // app: {api, trace(), timeline(), jump(ref, opts), laneTitle(id), offset(), status(text),
  //       showTab(tab), changed()}
  constructor(app) {
    this.app = app;
    this.q = '';
    this.regex = false;
    this.kind = 'all';
    this.sort = 'start';  // or 'dur': longest first
    this.total = 0;
    this.index = -1;
    this.page = null;  // {offset, events}
    this.count = document.getElementById('search-count');
    this.results = document.getElementById('search-results');
    this.regexButton = document.getElementById('search-regex');
    this.kindSelect = document.getElementById('search-kind');
    this.regexButton.addEventListener('click', () => this.setMode({regex: !this.regex}));
    this.kindSelect.addEventListener('change', () => this.setMode({kind: this.kindSelect.value}));
  }

  reset() {
    this.q = '';
    this.total = 0;
    this.index = -1;
    this.page = null;
    this.count.textContent = '';
  }

  // The query's parameters for /search and /marks.
  params(extra = {}) {
    return {q: this.q, regex: this.regex ? 1 : undefined, kind: this.kind === 'all' ? undefined : this.kind,
            sort: this.sort === 'dur' ? 'dur' : undefined, ...extra};
  }

  // Changes the mode (regex, kind, sort) and, unless `rerun` is false, runs the current text again.
  setMode({regex = this.regex, kind = this.kind, sort = this.sort, rerun = true} = {}) {
    this.regex = regex;
    this.kind = SEARCH_KINDS.includes(kind) ? kind : 'all';
    this.sort = sort === 'dur' ? 'dur' : 'start';
    this.regexButton.setAttribute('aria-pressed', String(this.regex));
    this.regexButton.classList.toggle('on', this.regex);
    this.kindSelect.value = this.kind;
    const q = this.q || document.getElementById('search').value.trim();
    return q && rerun ? this.run(q, {index: 0}) : Promise.resolve(true);
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
      this.results.textContent = 'Type text (or, with .*, a regular expression) in the search box and press Enter.';
      this.app.changed();
      return true;
    }
    if (this.regex) {
      try {
        new RegExp(q, 'i');
      } catch (e) {
        this.count.textContent = 'bad expression';
        this.app.status(`bad regular expression: ${e.message}`);
        this.q = '';
        return false;
      }
    }
    tl.setHighlight({q, regex: this.regex, kind: this.kind});
    let r;
    try {
      r = await this.app.api.search(this.app.trace(), this.params({limit: PAGE}));
    } catch (e) {
      this.count.textContent = 'error';
      this.app.status(e.message);
      return false;
    }
    if (this.q !== q) return true;
    this.app.status('');  // an earlier search's error is gone
    this.total = r.total;
    this.page = {offset: 0, events: r.events};
    if (show) this.app.showTab('search');
    if (this.total === 0) {
      this.count.textContent = 'no match';
      renderSearch(this.results, this.describe(), r, -1, this.ctx());
      this.app.changed();
      return true;
    }
    await this.goto(((index % this.total) + this.total) % this.total, {jump});
    return true;
  }

  // What the results are: the text or expression, the kind, the order.
  describe() {
    const what = this.regex ? `/${this.q}/` : `“${this.q}”`;
    const kind = this.kind === 'all' ? '' : ` among ${this.kind}`;
    return {what: `${what}${kind}`, sort: this.sort};
  }

  async step(delta) {
    if (this.total === 0) return;
    await this.goto((this.index + delta + this.total) % this.total);
  }

  async goto(index, {jump = true} = {}) {
    const offset = Math.floor(index / PAGE) * PAGE;
    if (!this.page || this.page.offset !== offset) {
      const r = await this.app.api.search(this.app.trace(), this.params({offset, limit: PAGE}));
      this.page = {offset, events: r.events};
    }
    this.index = index;
    const ref = this.page.events[index - offset];
    this.count.textContent = `${(index + 1).toLocaleString()} / ${this.total.toLocaleString()}`;
    renderSearch(this.results, this.describe(), {total: this.total, offset, events: this.page.events}, index, this.ctx());
    if (ref && jump) this.app.jump(ref, {keepTab: true});
    this.app.changed();
  }

  ctx() {
    return {
      onJump: (ref, n) => (n === undefined ? this.app.jump(ref) : this.goto(n)),
      onSort: (sort) => this.setMode({sort}),
      offset: this.app.offset(),
      laneTitle: (id) => this.app.laneTitle(id),
    };
  }
}
