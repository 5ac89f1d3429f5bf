// ModelConfig (opscope/neuron.h): the public face of the model's parameters, a preset and its
// overrides held as the Params the device and the cost model read (params.h).
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "device/neuron/params.h"
#include "opscope/neuron.h"

namespace opscope::neuron {

ModelConfig::ModelConfig() : params_(std::make_unique<Params>(neuron::Preset("trn1"))) {}
ModelConfig::~ModelConfig() = default;
ModelConfig::ModelConfig(const ModelConfig& other)
    : params_(std::make_unique<Params>(*other.params_)) {}
ModelConfig& ModelConfig::operator=(const ModelConfig& other) {
  if (this != &other) *params_ = *other.params_;
  return *this;
}

ModelConfig ModelConfig::Preset(std::string_view name) {
  ModelConfig config;
  *config.params_ = neuron::Preset(name);
  return config;
}

std::vector<std::string> ModelConfig::PresetNames() { return neuron::PresetNames(); }

ModelConfig ModelConfig::FromEnvironment() {
  ModelConfig config;
  *config.params_ = ParamsFromEnvironment();
  return config;
}

void ModelConfig::ApplyOverrides(std::string_view text, std::string_view source) {
  Params next = *params_;  // all or nothing: a bad line leaves the configuration as it was
  neuron::ApplyOverrides(text, source, &next);
  *params_ = std::move(next);
}

void ModelConfig::ApplyOverridesFile(const std::string& path) {
  Params next = *params_;
  neuron::ApplyOverridesFile(path, &next);
  *params_ = std::move(next);
}

const std::string& ModelConfig::preset() const { return params_->preset; }

double ModelConfig::Get(std::string_view key) const { return ParamValue(*params_, key); }

std::string ModelConfig::Format() const { return FormatParams(*params_); }

std::string ModelConfig::FormatRanges() { return FormatParamRanges(); }

const Params& ParamsOf(const ModelConfig& config) { return *config.params_; }

ModelConfig ConfigOf(const Params& params) {
  ValidateParams(params);
  ModelConfig config;
  *config.params_ = params;
  return config;
}

}  // namespace opscope::neuron
