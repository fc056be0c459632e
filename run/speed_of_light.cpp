#include "run/speed_of_light.h"

#include <cmath>

#include <cstdio>
#include <stdexcept>
#include <utility>

#include "run/json_values.h"

namespace dtbench::run {
namespace {

std::string figure(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", value);
  return text;
}

// The value of `key` in `object`, or std::invalid_argument "<key> ..." from its reader.
template <typename Read>
auto lightField(const nlohmann::json& object, const char* key, Read read) {
  try {
    return read(object.at(key));
  } catch (const nlohmann::json::exception&) {
    throw std::invalid_argument(std::string(key) + " is missing");
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string(key) + " " + e.what());
  }
}

Precision precisionValue(const nlohmann::json& value) {
  const std::optional<Precision> p = parsePrecision(textValue(value));
  if (!p) wrongValue("fp32, tf32, bf16 or fp16", value);
  return *p;
}

}  // namespace

std::optional<double> SpeedOfLight::peakFlopsPerS() const {
  if (gemmProbe) return gemmProbe->gflops > 0 ? std::optional(gemmProbe->gflops * 1e9) : std::nullopt;
  if (!convolutionPeak || !linearPeak || !(flops.training() > 0)) return std::nullopt;
  double seconds = 0;  // the training FLOPs of one image at the peaks
  if (flops.trainingConvolution > 0) {
    if (!convolutionPeak->tflops) return std::nullopt;
    seconds += flops.trainingConvolution / (*convolutionPeak->tflops * 1e12);
  }
  if (flops.trainingLinear > 0) {
    if (!linearPeak->tflops) return std::nullopt;
    seconds += flops.trainingLinear / (*linearPeak->tflops * 1e12);
  }
  return flops.training() / seconds;
}

std::string SpeedOfLight::peakLabel() const {
  if (gemmProbe)
    return "CPU GEMM probe: " + figure(gemmProbe->gflops) + " GFLOP/s (" + std::to_string(gemmProbe->size) + "x" +
           std::to_string(gemmProbe->size) + " fp32 matrix products, " + std::to_string(gemmProbe->threads) +
           (gemmProbe->threads == 1 ? " thread" : " threads") + ", measured " + gemmProbe->measured + ")";
  if (!convolutionPeak || !linearPeak) return "none recorded";
  for (const PeakUsed* peak : {&*convolutionPeak, &*linearPeak})
    if (!peak->tflops) return peak->gpu + ": " + peak->reason;
  std::string label = convolutionPeak->gpu + ": convolutions " + precisionName(convolutionPeak->precision) + " " +
                      figure(*convolutionPeak->tflops) + " TFLOP/s, linear layers " +
                      precisionName(linearPeak->precision) + " " + figure(*linearPeak->tflops) + " TFLOP/s";
  if (tf32Cudnn && tf32Cublas)
    label += std::string(" (TF32: cuDNN ") + (*tf32Cudnn ? "on" : "off") + ", cuBLAS " + (*tf32Cublas ? "on" : "off") + ")";
  return label + "; " + convolutionPeak->source;
}

namespace {

std::optional<Precision> autocastPrecision(Amp amp) {
  switch (amp) {
    case Amp::kBf16: return Precision::bf16;
    case Amp::kFp16: return Precision::fp16;
    case Amp::kOff: return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

SpeedOfLight gpuSpeedOfLight(const ModelFlops& flops, Amp amp, bool tf32Cudnn, bool tf32Cublas,
                             const DeviceFacts& device) {
  SpeedOfLight s;
  s.flops = flops;
  s.tf32Cudnn = tf32Cudnn;
  s.tf32Cublas = tf32Cublas;
  const std::optional<Precision> autocast = autocastPrecision(amp);
  s.convolutionPrecision = autocast ? *autocast : tf32Cudnn ? Precision::tf32 : Precision::fp32;
  s.linearPrecision = autocast ? *autocast : tf32Cublas ? Precision::tf32 : Precision::fp32;
  s.convolutionPeak = peakFor(device, s.convolutionPrecision);
  s.linearPeak = peakFor(device, s.linearPrecision);
  // What ran: TF32 on a part without it is fp32 (peakFor says so).
  s.convolutionPrecision = s.convolutionPeak->precision;
  s.linearPrecision = s.linearPeak->precision;
  return s;
}

SpeedOfLight gpuRowSpeedOfLight(const ModelFlops& flops, Precision convolution, Precision linear, const GpuPeaks& row) {
  SpeedOfLight s;
  s.flops = flops;
  s.convolutionPeak = peakOfRow(row, convolution);
  s.linearPeak = peakOfRow(row, linear);
  s.convolutionPrecision = s.convolutionPeak->precision;
  s.linearPrecision = s.linearPeak->precision;
  return s;
}

SpeedOfLight cpuSpeedOfLight(const ModelFlops& flops, Amp amp, const GemmProbe& probe) {
  SpeedOfLight s;
  s.flops = flops;
  const std::optional<Precision> autocast = autocastPrecision(amp);
  s.convolutionPrecision = s.linearPrecision = autocast ? *autocast : Precision::fp32;
  s.gemmProbe = probe;
  return s;
}

nlohmann::json speedOfLightJson(const SpeedOfLight& s) {
  nlohmann::json out = {
      {"flops_per_image",
       {{"forward", s.flops.forward},
        {"training", s.flops.training()},
        {"training_convolution", s.flops.trainingConvolution},
        {"training_linear", s.flops.trainingLinear},
        {"elementwise", s.flops.elementwise}}},
      {"convolution_precision", precisionName(s.convolutionPrecision)},
      {"linear_precision", precisionName(s.linearPrecision)},
  };
  if (s.tf32Cudnn && s.tf32Cublas) out["tf32"] = {{"cudnn", *s.tf32Cudnn}, {"cublas", *s.tf32Cublas}};
  if (s.convolutionPeak) out["convolution_peak"] = peakJson(*s.convolutionPeak);
  if (s.linearPeak) out["linear_peak"] = peakJson(*s.linearPeak);
  if (s.gemmProbe)
    out["gemm_probe"] = {{"gflops", s.gemmProbe->gflops},
                         {"threads", s.gemmProbe->threads},
                         {"size", s.gemmProbe->size},
                         {"seconds", s.gemmProbe->seconds},
                         {"measured", s.gemmProbe->measured}};
  return out;
}

SpeedOfLight readSpeedOfLightJson(const nlohmann::json& value) {
  if (!value.is_object()) wrongValue("an object", value);
  SpeedOfLight s;
  const nlohmann::json& flops = lightField(value, "flops_per_image", [](const nlohmann::json& v) -> const nlohmann::json& {
    if (!v.is_object()) wrongValue("an object", v);
    return v;
  });
  s.flops.forward = lightField(flops, "forward", numberValue);
  s.flops.trainingConvolution = lightField(flops, "training_convolution", numberValue);
  s.flops.trainingLinear = lightField(flops, "training_linear", numberValue);
  s.flops.elementwise = lightField(flops, "elementwise", numberValue);
  s.convolutionPrecision = lightField(value, "convolution_precision", precisionValue);
  s.linearPrecision = lightField(value, "linear_precision", precisionValue);
  if (value.contains("tf32")) {
    const nlohmann::json& tf32 = value.at("tf32");
    if (!tf32.is_object()) throw std::invalid_argument("tf32 takes an object, got " + tf32.dump());
    s.tf32Cudnn = lightField(tf32, "cudnn", booleanValue);
    s.tf32Cublas = lightField(tf32, "cublas", booleanValue);
  }
  if (value.contains("convolution_peak")) s.convolutionPeak = lightField(value, "convolution_peak", readPeakJson);
  if (value.contains("linear_peak")) s.linearPeak = lightField(value, "linear_peak", readPeakJson);
  if (value.contains("gemm_probe")) {
    const nlohmann::json& probe = value.at("gemm_probe");
    if (!probe.is_object()) throw std::invalid_argument("gemm_probe takes an object, got " + probe.dump());
    GemmProbe& p = s.gemmProbe.emplace();
    // A rate, a thread count, a matrix size and a time that were measured: each above 0.
    const auto positive = [](const nlohmann::json& v) {
      const double number = numberValue(v);
      if (!(number > 0) || !std::isfinite(number)) wrongValue("a finite number > 0", v);
      return number;
    };
    const auto atLeastOne = [](const nlohmann::json& v) {
      const int64_t number = wholeValue(v);
      if (number < 1) wrongValue("a whole number >= 1", v);
      return number;
    };
    p.gflops = lightField(probe, "gflops", positive);
    p.threads = lightField(probe, "threads", atLeastOne);
    p.size = lightField(probe, "size", atLeastOne);
    p.seconds = lightField(probe, "seconds", positive);
    p.measured = lightField(probe, "measured", textValue);
  }
  return s;
}

}  // namespace dtbench::run
