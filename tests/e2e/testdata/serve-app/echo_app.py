# The Serve application of TestRayServiceUpgrade (import path echo_app:app,
# in the Pods' image under /home/ray): each answer names the RayCluster and
# the node that served it, so the test sees which cluster the RayService's
# serve Service reaches.
import os

import ray
from ray import serve


@serve.deployment
class Echo:
    async def __call__(self, request):
        return {
            "cluster": os.environ.get("RAY_CLUSTER_NAME", ""),
            "node_ip": ray.util.get_node_ip_address(),
        }


app = Echo.bind()
