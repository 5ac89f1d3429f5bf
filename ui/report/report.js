// The HTML report's entry: reads the embedded document, builds the page for its kind (trace, job,
// diff, job_diff, check), draws the charts and marks the page ready (body data-ready="1", or
// "error" with the message shown).
'use strict';
(function (R) {
  const el = R.el;

  function build() {
    const doc = JSON.parse(document.getElementById('opscope-data').textContent);
    R.doc = doc;
    R.rowLimit = typeof doc.rows === 'number' ? doc.rows : 500;
    R.toc = [];
    document.getElementById('title').textContent = doc.title;
    const limit = R.rowLimit >= 0 ? `Tables list up to ${R.rowLimit} rows` : 'Tables list every row';
    document.getElementById('subtitle').textContent =
        `${limit}; every number comes from the JSON document embedded in this file (${doc.command}). ` +
        `Click a column to sort. Charts: ${doc.engine === 'uplot' ? 'uPlot and the report\'s own canvas code' : 'the report\'s own canvas code'}.`;
    const pages = {trace: R.traceSections, job: R.jobSections, diff: R.diffSections, job_diff: R.diffSections, check: R.checkSections};
    const page = pages[doc.kind];
    if (!page) throw new Error('unknown report kind ' + doc.kind);
    const sections = page(doc).filter(Boolean);
    const main = document.getElementById('main');
    main.replaceChildren(...sections);
    document.getElementById('toc').replaceChildren(...R.toc.map(([id, title]) => el('a', {href: '#' + id}, title)));
    R.drawAll();
  }

  function start() {
    try {
      build();
      document.body.dataset.ready = '1';
    } catch (e) {
      document.body.dataset.ready = 'error';
      document.getElementById('main').replaceChildren(el('p', {class: 'error'}, 'This report could not be shown: ' + e.message));
      throw e;
    }
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start); else start();
})(window.OpscopeReport = window.OpscopeReport || {});
