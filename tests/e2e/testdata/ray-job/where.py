# TestRealRay's job: one task on every worker node of the cluster, pinned to
# it, each answering with the IP Ray knows that node by and the host name it
# runs on (the Pod's). Prints one JSON line: {"<node ip>": "<host name>", ...}.
import json
import socket

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

ray.init()


@ray.remote(num_cpus=1)
def where():
    return ray.util.get_node_ip_address(), socket.gethostname()


workers = [n for n in ray.nodes() if n["Alive"] and "node:__internal_head__" not in n["Resources"]]
tasks = [where.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)).remote()
         for n in workers]
print("WHERE " + json.dumps(dict(ray.get(tasks)), sort_keys=True))
