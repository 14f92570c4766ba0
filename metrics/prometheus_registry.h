// metrics::Registry on prometheus-cpp: the only code that includes it.
#ifndef SPEAKERMEM_METRICS_PROMETHEUS_REGISTRY_H_
#define SPEAKERMEM_METRICS_PROMETHEUS_REGISTRY_H_

#include <memory>

#include "metrics/metrics.h"

namespace speakermem::metrics {

std::unique_ptr<Registry> NewPrometheusRegistry();

}  // namespace speakermem::metrics

#endif  // SPEAKERMEM_METRICS_PROMETHEUS_REGISTRY_H_
