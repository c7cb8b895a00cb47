# prometheus-nginxlog-exporter, beside nginx in the gateway's pod (apps/gateway.yaml). nginx sends
# one line per request over syslog (GATEWAY_METRICS_SYSLOG, log_format svc_metrics):
#   "<method> <v1|oauth|other>" <status> <request_time>
# Exported on :4040/metrics as gateway_http_response_count_total{method,status,area} and
# gateway_http_response_time_seconds_hist{method,status,area} (a histogram); the PodMonitor adds
# app="gateway". The area label comes from the second word of "request" (relabel, experimental).
listen {
  port = 4040
  address = "0.0.0.0"
  metrics_endpoint = "/metrics"
}

enable_experimental = true

namespace "gateway" {
  metrics_override = { prefix = "gateway" }

  source {
    syslog {
      listen_address = "udp://127.0.0.1:5531"
      format = "rfc3164"
      tags = ["gateway"]
    }
  }

  format = "\"$request\" $status $request_time"

  relabel "area" {
    from = "request"
    split = 2
  }

  histogram_buckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
}
