import { Global, Module } from '@nestjs/common';
import { RpcClient } from './rpc-client';

@Global()
@Module({ providers: [RpcClient], exports: [RpcClient] })
export class RpcModule {}
