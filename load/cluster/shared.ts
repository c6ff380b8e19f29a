// What the multi-instance run's processes share.
export const CLUSTER_QUEUE = 'cluster-deliveries'
