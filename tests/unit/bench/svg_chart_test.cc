// Charts claim only what they draw and render anywhere: the "dashed: published" caption appears
// exactly when a dashed published series is drawn, the font stack names CJK fallbacks, labels wrap
// at spaces and never inside a word, heat maps colour from 0, and the min–max of repetitions is
// drawn (whiskers, a line in a heat-map cell) and captioned only where there is one.
#include "svg_chart.h"

#include <gtest/gtest.h>

namespace sp::bench {
namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) {
    ++n;
  }
  return n;
}

ChartData ours() {
  ChartData d;
  d.title = "SET requests per second";
  d.subtitle = "sweep (full scale), 8 CPUs";
  d.x_title = "Connections";
  d.y_title = "requests/s";
  d.x_labels = {"1", "8", "64"};
  d.series.push_back({"redis (this machine)", {100, 200, 300}, false, {}});
  d.published_source = "001_seed.txt";
  return d;
}

ChartData withPublished() {
  ChartData d = ours();
  d.series.push_back({"seed: Kuaijie 1G", {150, 250, 350}, true, {}});
  return d;
}

TEST(SvgChartTest, NamesAFontStackWithCjkFallbacks) {
  const std::string svg = lineChartSvg(ours());
  EXPECT_NE(svg.find("font-family=\"'DejaVu Sans', 'Noto Sans CJK SC', 'Noto Sans CJK', "
                     "'WenQuanYi Micro Hei', sans-serif\""),
            std::string::npos)
      << svg.substr(0, 400);
  HeatMapData h;
  h.rows = {"2 shards"};
  h.cols = {"1"};
  h.values = {{1000}};
  EXPECT_NE(heatMapSvg(h).find(std::string("font-family=\"") + kFontFamily + "\""),
            std::string::npos);
}

TEST(SvgChartTest, PublishedSeriesAreDashedAndCaptioned) {
  for (const std::string& svg : {lineChartSvg(withPublished()), barChartSvg(withPublished())}) {
    EXPECT_NE(svg.find("dashed: published, other hardware and network (001_seed.txt)"),
              std::string::npos);
    EXPECT_NE(svg.find(">published, other hardware and network<"), std::string::npos)
        << "legend caption";
    EXPECT_NE(svg.find("stroke-dasharray"), std::string::npos);
  }
}

TEST(SvgChartTest, NoPublishedSeriesNoPublishedClaim) {
  for (const std::string& svg : {lineChartSvg(ours()), barChartSvg(ours())}) {
    EXPECT_EQ(svg.find("dashed"), std::string::npos);
    EXPECT_EQ(svg.find("published"), std::string::npos);
    EXPECT_EQ(svg.find("stroke-dasharray"), std::string::npos);
  }
}

TEST(SvgChartTest, NoDashedTextWithoutADashedPath) {
  for (const ChartData& d : {ours(), withPublished()}) {
    for (const std::string& svg : {lineChartSvg(d), barChartSvg(d)}) {
      const bool says = svg.find("dashed") != std::string::npos;
      // A dashed polyline (line chart) or a dashed bar outline, not only the legend's sample.
      const bool draws = svg.find(
                             "<polyline fill=\"none\" stroke=\"#7f7f7f\" stroke-width=\"1.5\" "
                             "stroke-dasharray") != std::string::npos ||
                         count(svg, "stroke-dasharray=\"4 2\"><title>") > 0;
      EXPECT_EQ(says, draws) << svg;
    }
  }
}

TEST(SvgChartTest, LabelsWrapAtSpacesNeverInsideAWord) {
  EXPECT_EQ(wrapLabel("Uniform read 50% update 50%", 12),
            (std::vector<std::string>{"Uniform read", "50% update", "50%"}));
  EXPECT_EQ(wrapLabel("short", 12), std::vector<std::string>{"short"});
  // A word longer than a line is shortened to whole characters and an ellipsis.
  EXPECT_EQ(wrapLabel("a Uniform-50%Read-50%Update", 10),
            (std::vector<std::string>{"a", "Uniform-5\u2026"}));
  EXPECT_EQ(wrapLabel("記憶體大於資料情境", 5), std::vector<std::string>{"記憶體大\u2026"});

  ChartData d = ours();
  d.x_labels = {"Uniform read 50% update 50% of the keys in the whole key space", "8", "64"};
  const std::string svg = barChartSvg(d);
  for (const std::string word : {"Uniform", "update", "keys", "whole", "space"}) {
    EXPECT_NE(svg.find(word), std::string::npos) << word;  // every word whole on some line
  }
  for (const std::string piece : {">niform", ">pdate", ">ey", ">hole", ">pace"}) {
    EXPECT_EQ(svg.find(piece), std::string::npos) << piece;  // no line starts mid-word
  }
}

TEST(SvgChartTest, ALongSubtitleWrapsAndTheFrameGrows) {
  ChartData d = withPublished();
  d.subtitle =
      "a column of the table \u201cMemory larger than data (記憶體大於資料情境)\u201d; ycsb "
      "(full scale), 16 CPUs";
  d.published_source = "003_0123456789abcdef.txt";
  const std::string svg = lineChartSvg(d);
  EXPECT_NE(svg.find("y=\"46.0\" font-size=\"12\""), std::string::npos);
  EXPECT_NE(svg.find("y=\"61.0\" font-size=\"12\""), std::string::npos) << "second line";
  EXPECT_NE(svg.find("height=\"515.0\""), std::string::npos);
  EXPECT_EQ(lineChartSvg(ours()).find("y=\"61.0\" font-size=\"12\""), std::string::npos);
}

TEST(SvgChartTest, HeatMapScaleStartsAtZero) {
  HeatMapData h;
  h.title = "SET";
  h.rows = {"2 shards"};
  h.cols = {"1", "2"};
  h.values = {{90000, 100000}};
  h.legend = "requests/s";
  const std::string svg = heatMapSvg(h);
  EXPECT_NE(svg.find(">requests/s, scale from 0<"), std::string::npos);
  EXPECT_NE(svg.find(">0</text>"), std::string::npos);  // the legend's low end
  // 90k of 100k is near the top of the scale, not its bottom colour (viridis' #440154).
  EXPECT_EQ(svg.find("fill=\"#440154\" stroke=\"#ffffff\""), std::string::npos);
}

TEST(SvgChartTest, RangesAreDrawnAsWhiskersAndCaptioned) {
  for (bool bars : {false, true}) {
    ChartData d = ours();
    d.series[0].ranges = {ValueRange{90, 110}, std::nullopt, ValueRange{300, 300}};
    const std::string svg = bars ? barChartSvg(d) : lineChartSvg(d);
    EXPECT_EQ(count(svg, "<g class=\"range\""), 1u) << "a point range draws nothing\n" << svg;
    EXPECT_NE(svg.find("whiskers: min\u2013max of the repetitions"), std::string::npos);
    EXPECT_NE(svg.find("min\u2013max 90\u2013110</title>"), std::string::npos) << svg;
    // No whisker, no caption.
    const std::string plain = bars ? barChartSvg(ours()) : lineChartSvg(ours());
    EXPECT_EQ(plain.find("whiskers"), std::string::npos);
    EXPECT_EQ(plain.find("class=\"range\""), std::string::npos);
  }
}

TEST(SvgChartTest, TheAxisMakesRoomForTheTopOfARange) {
  ChartData d = ours();
  d.series[0].ranges = {std::nullopt, std::nullopt, ValueRange{250, 900}};
  const std::string svg = lineChartSvg(d);
  EXPECT_NE(svg.find(">1000</text>"), std::string::npos) << svg;  // not 350
}

TEST(SvgChartTest, HeatMapCellsShowTheirRange) {
  HeatMapData h;
  h.title = "t";
  h.rows = {"2 shards"};
  h.cols = {"1", "2"};
  h.values = {{100.0, 200.0}};
  h.ranges = {{ValueRange{90, 110}, std::nullopt}};
  h.notes = {{"\u2248 best", "best"}};
  const std::string svg = heatMapSvg(h);
  EXPECT_NE(svg.find(">90\u2013110</text>"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">\u2248 best</text>"), std::string::npos);
  EXPECT_NE(svg.find(">best</text>"), std::string::npos);
  EXPECT_NE(svg.find("under a value: min\u2013max of the repetitions"), std::string::npos);
  h.ranges.clear();
  EXPECT_EQ(heatMapSvg(h).find("min\u2013max"), std::string::npos);
}

}  // namespace
}  // namespace sp::bench
