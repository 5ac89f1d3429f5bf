// Browser tests of the opscope Explorer in real headless Chromium (driven by playwright-core),
// one browser for all: tools/run_browser_tests.sh starts `opscope explore` on the demo profile
// and fixture traces and sets OPSCOPE_URL, CHROMIUM and ARTIFACTS (screenshots go there); the job
// page's tests use a second server on a generated job (OPSCOPE_JOB_URL, OPSCOPE_JOB_REPORT), the
// loading state a third one on a named pipe (OPSCOPE_STREAM_URL, OPSCOPE_STREAM_FIFO), and the
// tests of exact times, names and search a fourth one on a folder of single traces
// (OPSCOPE_SINGLES_URL: an epoch-timestamp copy of a fixture and a trace of look-alike names).
import './harness.mjs';
import './views.mjs';
import './navigation.mjs';
import './job.mjs';
import './critical_path.mjs';
import './memory.mjs';
import './loading.mjs';
import './exact.mjs';
import './job_view.mjs';
import './names_search.mjs';
import './details.mjs';
import './neuron.mjs';
