// Report building blocks: Markdown tables, number formatting, slugs, the JSON writer (its output
// read back by the project's JSON reader) and the SVG charts (well-formed, escaped, complete).
#include <gtest/gtest.h>

#include "json.h"
#include "json_writer.h"
#include "markdown_table.h"
#include "svg_chart.h"

namespace sp::bench {
namespace {

size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1)) {
    ++n;
  }
  return n;
}

TEST(ReportFormatTest, MarkdownTable) {
  MarkdownTable t({"name", "qps"}, {false, true});
  t.addRow({"a|b", "12"});
  t.addRow({"c"});
  EXPECT_EQ(t.render(), "| name | qps |\n| -- | --: |\n| a\\|b | 12 |\n| c |   |\n");
}

TEST(ReportFormatTest, Numbers) {
  EXPECT_EQ(formatValue(123456.7, 0), "123457");
  EXPECT_EQ(formatValue(1.23456, 3), "1.235");
  EXPECT_EQ(formatValue(std::nullopt, 0), "—");
  EXPECT_EQ(formatRatio(0.8749), "0.87×");
  EXPECT_EQ(shortNumber(950), "950");
  EXPECT_EQ(shortNumber(12345), "12.3k");
  EXPECT_EQ(shortNumber(1500000), "1.5M");
  EXPECT_EQ(slugify("SET requests/s (Hiệu năng)"), "set-requests-s-hi-u-n-ng");
  EXPECT_EQ(slugify("!!"), "table");
}

TEST(ReportFormatTest, JsonWriterOutputParses) {
  JsonWriter j;
  j.beginObject();
  j.field("name", "a \"quoted\" name").field("n", static_cast<uint64_t>(42));
  j.field("x", 1.5, 2).field("none", std::optional<double>(), 2).field("ok", true);
  j.key("list").beginArray().value(1).value("two").beginObject().endObject().endArray();
  j.key("empty").beginArray().endArray();
  j.endObject();
  JsonValue v;
  std::string error;
  ASSERT_TRUE(JsonValue::parse(j.text(), &v, &error)) << error << "\n" << j.text();
  EXPECT_EQ(v["name"].asString(), "a \"quoted\" name");
  EXPECT_EQ(v["n"].asU64(), 42u);
  EXPECT_DOUBLE_EQ(v["x"].asDouble(), 1.5);
  EXPECT_EQ(v["none"].type(), JsonValue::Type::kNull);
  EXPECT_TRUE(v["ok"].asBool());
  EXPECT_EQ(v["list"].size(), 3u);
  EXPECT_EQ(v["list"][1].asString(), "two");
  EXPECT_EQ(v["empty"].size(), 0u);
}

ChartData sample() {
  ChartData d;
  d.title = "SET <requests> & more";
  d.x_title = "Connections";
  d.y_title = "requests/s";
  d.x_labels = {"1", "8", "64"};
  d.series.push_back({"ours", {100, std::nullopt, 300}, false, {}});
  d.series.push_back({"seed: \"1G\"", {150, 250, 350}, true, {}});
  return d;
}

void expectWellFormed(const std::string& svg) {
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  // Every element that is opened is closed (self-closing ones need no partner).
  for (const char* tag : {"text", "title", "circle", "rect"}) {
    const std::string open = std::string("<") + tag + " ";
    const std::string open_plain = std::string("<") + tag + ">";
    const std::string close = std::string("</") + tag + ">";
    size_t opens = count(svg, open) + count(svg, open_plain);
    size_t self_closing = 0;
    for (size_t pos = svg.find(open); pos != std::string::npos; pos = svg.find(open, pos + 1)) {
      const size_t end = svg.find('>', pos);
      if (svg[end - 1] == '/') {
        ++self_closing;
      }
    }
    EXPECT_EQ(opens - self_closing, count(svg, close)) << tag;
  }
  EXPECT_EQ(svg.find("& "), std::string::npos);  // escaped
}

TEST(ReportFormatTest, LineChart) {
  const std::string svg = lineChartSvg(sample());
  expectWellFormed(svg);
  EXPECT_NE(svg.find("SET &lt;requests&gt; &amp; more"), std::string::npos);
  EXPECT_NE(svg.find("seed: &quot;1G&quot;"), std::string::npos);
  EXPECT_NE(svg.find("stroke-dasharray"), std::string::npos);  // the reference series
  // Ours is broken by the missing value into two single points: markers, no line.
  EXPECT_EQ(count(svg, "<polyline"), 1u);
  EXPECT_EQ(count(svg, "<circle"), 5u);
}

TEST(ReportFormatTest, BarChart) {
  const std::string svg = barChartSvg(sample());
  expectWellFormed(svg);
  EXPECT_EQ(count(svg, "<title>"), 5u);  // one per bar that has a value
}

TEST(ReportFormatTest, LongLabelsWrapWithoutSplittingCharacters) {
  ChartData d = sample();
  d.x_labels = {"Uniform-50%Read-50%Update-READ-and-more",
                "記憶體大於資料情境記憶體大於資料情境記憶體大於資料情境", "x"};
  d.series[0].name = "記憶體大於資料情境記憶體大於資料情境記憶體大於資料情境記憶體大於資料情境";
  for (const std::string& svg : {barChartSvg(d), lineChartSvg(d)}) {
    expectWellFormed(svg);
    // Valid UTF-8 throughout: every lead byte is followed by the right number of continuations.
    for (size_t i = 0; i < svg.size();) {
      const auto c = static_cast<unsigned char>(svg[i]);
      const size_t n = c < 0x80         ? 1
                       : (c >> 5) == 6  ? 2
                       : (c >> 4) == 14 ? 3
                       : (c >> 3) == 30 ? 4
                                        : 0;
      ASSERT_NE(n, 0u) << "stray byte at " << i;
      for (size_t k = 1; k < n; ++k) {
        ASSERT_EQ(static_cast<unsigned char>(svg[i + k]) & 0xC0, 0x80) << "cut sequence at " << i;
      }
      i += n;
    }
    EXPECT_EQ(svg.find("Uniform-50%Read-50%Update-READ-and-more<"), std::string::npos);
  }
}

TEST(ReportFormatTest, HeatMap) {
  HeatMapData h;
  h.title = "SET";
  h.rows = {"2 shards", "4 shards"};
  h.cols = {"1", "2 †"};
  h.values = {{1000, 2000}, {std::nullopt, 4000}};
  h.notes = {{"", "† > nproc"}, {"failed", ""}};
  const std::string svg = heatMapSvg(h);
  expectWellFormed(svg);
  EXPECT_NE(svg.find(">failed<"), std::string::npos);
  EXPECT_NE(svg.find(">2000<"), std::string::npos);
  EXPECT_NE(svg.find("† &gt; nproc"), std::string::npos);
}

}  // namespace
}  // namespace sp::bench
