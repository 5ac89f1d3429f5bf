// The HTML report's tables: rows of the embedded JSON document, sortable by any column (click a
// header; again to reverse), kept to the document's row limit with a line saying how many more
// the document holds.
'use strict';
(function (R) {
  // columns: [{key, label, fmt?(value, row), num?: bool, value?(row)}]; rows: objects of the JSON.
  // Returns the element holding the table.
  R.table = function (name, columns, rows, {limit = R.rowLimit, sortKey = null, descending = true} = {}) {
    const holder = R.el('div', {class: 'table-wrap', 'data-table': name});
    const value = (c, r) => (c.value ? c.value(r) : r[c.key]);
    let sorted = rows.slice();
    let state = {key: sortKey, descending};
    const table = R.el('table', {class: 'grid'});
    const thead = R.el('thead');
    const tbody = R.el('tbody');
    table.append(thead, tbody);
    const note = R.el('p', {class: 'muted table-note'});

    function sortRows() {
      if (state.key === null) return;
      const col = columns.find((c) => c.key === state.key);
      const sign = state.descending ? -1 : 1;
      sorted = rows.slice().sort((a, b) => {
        const x = value(col, a), y = value(col, b);
        if (x === y) return 0;
        if (x === null || x === undefined) return 1;
        if (y === null || y === undefined) return -1;
        if (typeof x === 'number' && typeof y === 'number') return sign * (x - y);
        return sign * String(x).localeCompare(String(y));
      });
    }
    function render() {
      const head = R.el('tr');
      for (const c of columns) {
        const arrow = state.key === c.key ? (state.descending ? ' \u25BC' : ' \u25B2') : '';
        const th = R.el('th', {class: c.num ? 'num sortable' : 'sortable', 'data-key': c.key,
                               title: 'sort by ' + c.label}, c.label + arrow);
        th.addEventListener('click', () => {
          state = {key: c.key, descending: state.key === c.key ? !state.descending : !!c.num};
          sortRows();
          render();
        });
        head.append(th);
      }
      thead.replaceChildren(head);
      const shown = limit >= 0 ? sorted.slice(0, limit) : sorted;
      const body = document.createDocumentFragment();
      for (const r of shown) {
        const tr = R.el('tr');
        for (const c of columns) {
          const v = value(c, r);
          tr.append(R.el('td', {class: c.num ? 'num' : ''}, c.fmt ? c.fmt(v, r) : v === null || v === undefined ? '-' : String(v)));
        }
        body.append(tr);
      }
      tbody.replaceChildren(body);
      note.textContent = rows.length > shown.length
          ? `${shown.length} of ${rows.length} rows shown (the row limit); all are in the embedded JSON`
          : `${rows.length} rows`;
    }
    sortRows();
    render();
    holder.append(table, note);
    return holder;
  };
})(window.OpscopeReport = window.OpscopeReport || {});
