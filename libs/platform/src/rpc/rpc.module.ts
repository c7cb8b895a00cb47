import { Global, Module } from '@nestjs/common';
import { MessagingModule } from '../messaging/messaging.module';
import { RpcClient } from './rpc-client';

@Global()
@Module({ imports: [MessagingModule], providers: [RpcClient], exports: [RpcClient] })
export class RpcModule {}
