// The platform's migration runner lives in module/store-kernel (the task records use it too, without importing the platform).
export * from '../../store-kernel/migrator.ts';
