declare module 'parse-prometheus-text-format' {
  export interface Sample {
    value?: string
    labels?: Record<string, string>
    /** Histograms: upper bound to cumulative count. */
    buckets?: Record<string, string>
    count?: string
    sum?: string
  }
  export interface MetricFamily {
    name: string
    help: string
    type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED'
    metrics: Sample[]
  }
  export default function parsePrometheusTextFormat(text: string): MetricFamily[]
}
