// The self-contained HTML page (opscope/html_report.h): the report's template, style and code
// (ui/report/, with uPlot from npm, compiled in by embed_assets.cmake) around one JSON document,
// each inlined so that nothing in the data can end its element.
#include "opscope/html_report.h"

#include <cstdio>
#include <fstream>
#include <string>

#include "explorer/assets.h"

namespace opscope {
namespace {

std::string_view Asset(std::string_view path) {
  const explorer::Asset* a = explorer::FindReportAsset(path);
  if (a == nullptr) return {};
  return {reinterpret_cast<const char*>(a->data), a->size};
}

// Replaces every `from` with `to`.
std::string ReplaceAll(std::string_view text, std::string_view from, std::string_view to) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (true) {
    const size_t hit = text.find(from, pos);
    if (hit == std::string_view::npos) break;
    out.append(text.substr(pos, hit - pos));
    out.append(to);
    pos = hit + from.size();
  }
  out.append(text.substr(pos));
  return out;
}

// Script text that cannot close its <script> element: "</" becomes "<\/", the same in every
// place a script may hold it (strings, regular expressions, comments).
std::string InlineScript(std::string_view js) { return ReplaceAll(js, "</", "<\\/"); }

// Style text that cannot close its <style> element.
std::string InlineStyle(std::string_view css) { return ReplaceAll(css, "</", "<\\/"); }

// JSON inside <script type="application/json">: '<', '>' and '&' only occur in strings there,
// where their \u escapes read the same to JSON.parse, and no "</script" or "<!--" remains.
std::string InlineJson(std::string_view json) {
  std::string out;
  out.reserve(json.size() + json.size() / 64);
  for (const char c : json) {
    switch (c) {
      case '<':
        out += "\\u003c";
        break;
      case '>':
        out += "\\u003e";
        break;
      case '&':
        out += "\\u0026";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string HtmlText(std::string_view s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// The report's scripts in load order: the charting library first (it defines the global uPlot),
// then the report's own modules.
constexpr std::string_view kScripts[] = {
    "/uPlot.iife.min.js",  "/report_format.js", "/report_tables.js",
    "/report_charts.js",   "/report_plot.js",   "/report_neuron.js",
    "/report_sections.js", "/report_pages.js",  "/report.js"};
constexpr std::string_view kStyles[] = {"/uPlot.min.css", "/report.css"};

}  // namespace

std::string_view HtmlChartEngine() {
  return Asset("/uPlot.iife.min.js").empty() ? "canvas" : "uplot";
}

std::string HtmlPage(std::string_view title, std::string_view document_json) {
  std::string style, script;
  for (std::string_view name : kStyles) style += InlineStyle(Asset(name)) + "\n";
  for (std::string_view name : kScripts) script += InlineScript(Asset(name)) + "\n;\n";
  // Placeholders are replaced one after another, each in what the previous left: the data goes
  // last, so no text from the trace is ever searched for a placeholder.
  std::string page(Asset("/report.html"));
  page = ReplaceAll(page, "@@TITLE@@", HtmlText(title));
  page = ReplaceAll(page, "@@ENGINE@@", HtmlChartEngine());
  page = ReplaceAll(page, "/*@@STYLE@@*/", style);
  constexpr std::string_view kScriptSlot = "/*@@SCRIPT@@*/", kDataSlot = "/*@@DATA@@*/";
  const size_t script_at = page.find(kScriptSlot);
  const size_t data_at = page.find(kDataSlot);
  if (script_at == std::string::npos || data_at == std::string::npos || data_at > script_at) {
    return page;  // a template without its slots: the build embedded a wrong file
  }
  std::string out;
  out.reserve(page.size() + script.size() + document_json.size() * 11 / 10);
  out.append(page, 0, data_at);
  out += InlineJson(document_json);
  const size_t after_data = data_at + kDataSlot.size();
  out.append(page, after_data, script_at - after_data);
  out += script;
  out.append(page, script_at + kScriptSlot.size(), std::string::npos);
  return out;
}

Status WriteHtmlReport(const std::string& path, std::string_view html) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Status::IoError(path + ": cannot open for writing the HTML report", path);
  out.write(html.data(), static_cast<std::streamsize>(html.size()));
  out.close();
  if (!out) return Status::IoError(path + ": cannot write the HTML report", path);
  return Status::Ok();
}

}  // namespace opscope
