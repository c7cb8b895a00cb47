import { Module } from '@nestjs/common';
import { PingHandler } from './ping.handler';

@Module({ controllers: [PingHandler] })
export class SystemModule {}
