// Public entry of the platform runtime for other parts (`npm start`'s demo, benchmarks).
//
//   const running = await startPlatform({ listen: '127.0.0.1:0', dataDir, queue: 'embedded', workers: 8 });
//   await vpnProductServices(running.platform.modules).panelAdmin!.registerPanel({ location, api_url, access_hash });
//   const { uuid } = await running.platform.catalogue.createProduct('VpnProduct', { server_location, plan_type, bandwidth });
//   const { token } = await running.platform.tokens.create('demo');   // bearer token for /api/admin/*
//   await running.close();
export { startPlatform, startWorkerOnly, type RunningPlatform, type StartOptions } from './server.ts';
export { parseListen } from './listen.ts';
export { Platform, type PlatformOptions } from './platform.ts';
export { buildPlatformApp } from './app.ts';
export { PlatformOperations } from './operations.ts';
export { defineManifest, type ModuleManifest, type ExtensionEnv } from './extension.ts';
