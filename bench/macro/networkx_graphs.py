"""Graph algorithms with networkx on seeded random graphs: shortest paths,
components, a minimum spanning tree, maximum flow, cores, clustering,
betweenness and a topological order. Result: numbers summarising each."""
import networkx as nx


def make_graph(n, m, seed):
    g = nx.gnm_random_graph(n, m, seed=seed)
    for u, v in g.edges():
        g[u][v]["weight"] = (u * 31 + v * 17) % 23 + 1
        g[u][v]["capacity"] = (u * 7 + v * 13) % 11 + 1
    return g


def run():
    g = make_graph(1200, 4800, 3)
    out = []
    lengths = nx.single_source_dijkstra_path_length(g, 0)
    out.append(sum(lengths.values()))
    out.append(sum(len(p) for p in nx.single_source_shortest_path(g, 5).values()))
    out.append(sorted(len(c) for c in nx.connected_components(g))[-1])
    mst = nx.minimum_spanning_tree(g)
    out.append(sum(d["weight"] for _, _, d in mst.edges(data=True)))
    out.append(nx.maximum_flow_value(g, 0, 599))
    out.append(max(nx.core_number(g).values()))
    out.append(round(nx.average_clustering(g), 9))
    small = make_graph(150, 500, 7)
    bc = nx.betweenness_centrality(small)
    out.append(round(max(bc.values()), 9))
    dag = nx.gn_graph(900, seed=11)
    out.append(list(nx.topological_sort(dag))[:5])
    out.append(nx.diameter(make_graph(120, 500, 5)))
    return out


if __name__ == "__main__":
    print(run())
