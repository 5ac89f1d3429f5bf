# Installs the HTML report's charting library (uPlot) with npm, as pinned by ui/report's
# package-lock.json, and copies its minified script and style where the build embeds them. Run
# by the build (not at configure time):
#   cmake -DNPM=npm -DSOURCE=<ui/report> -DWORK=<dir> -DOUT_DIR=<dir> -P npm_assets.cmake
# Without npm, or when `npm ci` fails (offline with nothing in npm's cache), it writes empty files
# and says so: the reports then draw their x-y charts with their own canvas code
# (ui/report/report_charts.js), and HtmlChartEngine() says "canvas".
set(js "${OUT_DIR}/uPlot.iife.min.js")
set(css "${OUT_DIR}/uPlot.min.css")
file(MAKE_DIRECTORY "${WORK}" "${OUT_DIR}")
set(ok FALSE)
if(NPM)
  file(COPY_FILE "${SOURCE}/package.json" "${WORK}/package.json" ONLY_IF_DIFFERENT)
  file(COPY_FILE "${SOURCE}/package-lock.json" "${WORK}/package-lock.json" ONLY_IF_DIFFERENT)
  execute_process(
    COMMAND "${NPM}" ci --no-audit --no-fund --ignore-scripts --prefer-offline
    WORKING_DIRECTORY "${WORK}"
    RESULT_VARIABLE result
    OUTPUT_VARIABLE output
    ERROR_VARIABLE output)
  set(dist "${WORK}/node_modules/uplot/dist")
  if(result EQUAL 0 AND EXISTS "${dist}/uPlot.iife.min.js" AND EXISTS "${dist}/uPlot.min.css")
    file(COPY_FILE "${dist}/uPlot.iife.min.js" "${js}" ONLY_IF_DIFFERENT)
    file(COPY_FILE "${dist}/uPlot.min.css" "${css}" ONLY_IF_DIFFERENT)
    set(ok TRUE)
  else()
    message(WARNING "npm ci in ${WORK} failed (${result}): the HTML reports will draw their x-y "
                    "charts with their own canvas code instead of uPlot.\n${output}")
  endif()
else()
  message(WARNING "npm not found: the HTML reports will draw their x-y charts with their own "
                  "canvas code instead of uPlot")
endif()
if(NOT ok)
  file(WRITE "${js}.tmp" "")
  file(WRITE "${css}.tmp" "")
  file(COPY_FILE "${js}.tmp" "${js}" ONLY_IF_DIFFERENT)
  file(COPY_FILE "${css}.tmp" "${css}" ONLY_IF_DIFFERENT)
endif()
