import { publicUrl, type Config, type Logger } from '../common/index.ts';
import { createControlService, type ControlService } from '../control/index.ts';
import { createNodeService, type NodeService } from '../node/index.ts';
import { NodeBlocklistAdmin } from '../node/moderation/index.ts';
import { encodeControl } from '../node/bus/index.ts';
import { controlBus, joinCluster, type ClusterHandles } from './cluster.ts';
import { openObjectStore } from '../node/files/index.ts';
import { openStores } from './stores.ts';

export interface Deployment {
  control?: { service: ControlService; port: number; url: string };
  node?: { service: NodeService; port: number; url: string };
  stop(): Promise<void>;
}

/**
 * Starts what `ROLE` asks for on the store `STORE` names. Standalone runs both services in one
 * process and wires key revocations from the control service straight into the node's verifier.
 * With BUS=redis a node joins the cluster of every node on the same Redis, and the control service
 * announces revocations to all of them on the bus.
 */
export async function startDeployment(config: Readonly<Config>, log: Logger): Promise<Deployment> {
  const stores = await openStores(config, log);
  const { control: store, node: nodeStore } = stores;
  const runControl = config.ROLE !== 'node';
  const runNode = config.ROLE !== 'control';
  const nodeUrl = publicUrl(config.NODE_PUBLIC_URL, config.HOST, config.NODE_PORT);
  const controlUrl = publicUrl(config.CONTROL_PUBLIC_URL, config.HOST, config.CONTROL_PORT);
  const clustered = config.BUS === 'redis';
  let joined: ClusterHandles | undefined;
  const announcer = clustered && runControl ? await controlBus(config, log) : undefined;
  // Signed URLs of the embedded object store name the node's address, known once it listens.
  let clusterEndpoint = nodeUrl;
  const files = runNode ? await openObjectStore(config, () => clusterEndpoint) : undefined;
  const deployment: Deployment = {
    stop: async () => {
      await Promise.all([deployment.node?.service.close(), deployment.control?.service.close()]);
      await Promise.all([joined?.close(), announcer?.close(), files?.close()]);
      await stores.close();
    },
  };
  // The node starts first so that, with NODE_PORT=0, the endpoint registered for the demo cluster
  // carries the port actually bound.
  let node: NodeService | undefined;
  if (runNode) {
    if (clustered) joined = await joinCluster(config, log);
    node = await createNodeService({
      config,
      log: log.child({ service: 'node' }),
      store: nodeStore,
      keys: { publicKeys: async () => (await store.signingKeys.list()).map(({ kid, publicKeyPem }) => ({ kid, publicKeyPem })) },
      keyStatus: store.keys,
      appStatus: { isLive: async (appId) => (await store.applications.getById(appId)) !== undefined, tier: async (appId) => (await store.applications.getById(appId))?.tier },
      publicUrl: nodeUrl,
      usage: store.usage,
      fileUsage: { storedBytes: async (appId) => (await store.usage.read(appId, [])).fileBytes },
      webhooks: store.webhooks,
      beforeSend: store.beforeSend,
      attachmentSettings: async (appId) => (await store.attachmentSettings.get(appId))?.settings,
      pushSettings: (appId) => store.pushSettings.get(appId),
      pushLog: (records) => store.pushSettings.recordDeliveries(records),
      ...(files ? { files } : {}),
      ...(joined ? { cluster: joined.cluster } : {}),
    });
    const { port } = await node.listen(config.HOST, config.NODE_PORT);
    clusterEndpoint = publicUrl(config.NODE_PUBLIC_URL, config.HOST, port);
    deployment.node = { service: node, port, url: clusterEndpoint };
    const nodeId = joined?.cluster.nodeId;
    log.info({ event: 'listening', service: 'node', port, url: clusterEndpoint, ...(nodeId ? { nodeId } : {}) }, `cluster node listening on ${clusterEndpoint}`);
  }
  if (runControl) {
    const service = await createControlService({
      config,
      store,
      log: log.child({ service: 'control' }),
      clusterEndpoint,
      publicUrl: controlUrl,
      onKeyRevoked: (appId, keyId) => {
        node?.invalidateKey(appId, keyId);
        announcer?.publish({ kind: 'control' }, encodeControl({ type: 'apiKey.revoked', appId, keyId }));
      },
      onWebhooksChanged: (appId) => {
        node?.webhooksChanged(appId);
        announcer?.publish({ kind: 'control' }, encodeControl({ type: 'webhooks.changed', appId }));
      },
      // The blocklist lives with the nodes' moderation data, which every process opens: changed here
      // through the in-process node (which also sends its webhook event), else announced on the bus.
      blocklists:
        node?.blocklists ??
        new NodeBlocklistAdmin(nodeStore, async (appId) => {
          announcer?.publish({ kind: 'control' }, encodeControl({ type: 'blocklist.changed', appId }));
        }),
      onAttachmentSettingsChanged: (appId) => {
        node?.attachmentSettingsChanged(appId);
        announcer?.publish({ kind: 'control' }, encodeControl({ type: 'attachmentSettings.changed', appId }));
      },
      onPushSettingsChanged: (appId) => {
        node?.pushSettingsChanged(appId);
        announcer?.publish({ kind: 'control' }, encodeControl({ type: 'pushSettings.changed', appId }));
      },
      onAppDeleted: (appId) => {
        node?.appDeleted(appId);
        announcer?.publish({ kind: 'control' }, encodeControl({ type: 'app.deleted', appId }));
      },
    });
    const { port } = await service.listen(config.HOST, config.CONTROL_PORT);
    const url = publicUrl(config.CONTROL_PUBLIC_URL, config.HOST, port);
    deployment.control = { service, port, url };
    log.info({ event: 'listening', service: 'control', port, url }, `control service listening on ${url}`);
  }
  return deployment;
}
